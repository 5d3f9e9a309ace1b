"""The network in PyTorch against the Rust network, through the engine
(the Rust program, with LibTorch) on the same checkpoints."""

import json
import pathlib

import numpy as np
import pytest
import torch

import gipf
import gipf.engine
import gipf.torch
from gipf.engine import Engine

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE = str(ROOT / "models" / "reference.safetensors")


def positions(n, seed=1):
    rng = np.random.default_rng(seed)
    game, out = gipf.Game(), []
    while len(out) < n:
        if game.is_over:
            game = gipf.Game()
        out.append(game.copy())
        legal = game.legal_actions()
        game.play(legal[rng.integers(len(legal))])
    return out[:: max(1, n // 6)][:6] if n > 6 else out


def rust_view(engine, game):
    """The Rust network's priors (over the legal actions) and value, from a
    search of one simulation (the root's own evaluation)."""
    view = engine.analyse(variant=game.variant, actions=game.actions, simulations=1, candidates=50)
    return {c["action"]: c["prior"] for c in view["candidates"]}, view["value"]


def python_view(net, game):
    with torch.no_grad():
        logits, value = net(torch.from_numpy(game.encode()[None]))
    legal = game.legal_actions()
    priors = torch.softmax(logits[0, [gipf.index_of(a) for a in legal]], 0)
    return dict(zip(legal, priors.tolist())), float(value[0])


@pytest.fixture(scope="module")
def fp32(tmp_path_factory):
    """A config whose forward passes run in fp32 on any CPU."""
    path = tmp_path_factory.mktemp("config") / "fp32.toml"
    path.write_text('[play]\nprecision = "fp32"\n')
    return str(path)


def assert_same_outputs(checkpoint, net, fp32):
    with Engine(model=checkpoint, config=fp32, binary=str(ROOT / "target" / "debug" / "gipf")) as engine:
        for game in positions(60):
            rust_priors, rust_value = rust_view(engine, game)
            priors, value = python_view(net, game)
            assert rust_priors.keys() == priors.keys()
            assert max(abs(rust_priors[a] - priors[a]) for a in priors) < 1e-5
            assert abs(rust_value - value) < 1e-5


def test_a_checkpoint_loads_with_the_rust_networks_outputs(fp32):
    net = gipf.torch.load(REFERENCE)
    described = json.loads(pathlib.Path(REFERENCE).with_suffix(".json").read_text())
    assert net.network == described["network"] and net.description["variant"] == "standard"
    assert len(net.blocks) == described["network"]["blocks"], "as many residual blocks as the description says"
    assert_same_outputs(REFERENCE, net, fp32)


def test_a_saved_module_loads_and_plays_in_rust(tmp_path, fp32):
    net = gipf.torch.load(REFERENCE)
    # A change Rust must see: one SGD step towards a policy of e9-e8 everywhere.
    planes = torch.from_numpy(np.stack([g.encode() for g in positions(32, seed=2)]))
    target = torch.full((len(planes),), gipf.index_of("e9-e8"))
    net.train()
    loss = torch.nn.functional.cross_entropy(net(planes)[0], target)
    loss.backward()
    with torch.no_grad():
        for p in net.parameters():
            if p.grad is not None:
                p -= 0.5 * p.grad
    net.eval()
    saved = str(tmp_path / "tuned.safetensors")
    gipf.torch.save(net, saved, step=7)
    again = gipf.torch.load(saved)
    assert again.description["step"] == 7
    assert_same_outputs(saved, net, fp32)
    with Engine(model=saved, config=fp32, sims=8, binary=str(ROOT / "target" / "debug" / "gipf")) as engine:
        engine.new()
        assert engine.go() in gipf.Game().legal_actions()


def test_damaged_checkpoints_are_refused(tmp_path):
    good = gipf.torch.load(REFERENCE)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(b"\x00" * 20)
    (tmp_path / "bad.json").write_text(open(REFERENCE[: -len("safetensors")] + "json").read())
    with pytest.raises(ValueError, match="weights"):
        gipf.torch.load(str(path))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="description"):
        gipf.torch.load(str(path))
    small = gipf.torch.PolicyValueNet(1, 8, 8)
    gipf.torch.save(small, str(tmp_path / "small.safetensors"))
    (tmp_path / "small.json").write_text(open(REFERENCE[: -len("safetensors")] + "json").read())
    with pytest.raises(ValueError, match="do not fit"):
        gipf.torch.load(str(tmp_path / "small.safetensors"))
    # A shape past the Rust bounds is refused before any network is built
    # (100,000 blocks of 512 channels would take the machine's memory).
    described = json.loads(open(REFERENCE[: -len("safetensors")] + "json").read())
    described["network"]["blocks"] = 65
    (tmp_path / "small.json").write_text(json.dumps(described))
    with pytest.raises(ValueError, match="network.blocks"):
        gipf.torch.load(str(tmp_path / "small.safetensors"))
    with torch.no_grad():
        good.value_fc2.bias.fill_(float("nan"))
    with pytest.raises(ValueError, match="not finite"):
        gipf.torch.save(good, str(tmp_path / "nan.safetensors"))


def test_the_engines_errors_are_exceptions_and_it_closes_cleanly():
    engine = Engine(player="random", binary=str(ROOT / "target" / "debug" / "gipf"))
    with engine:
        engine.new("basic")
        with pytest.raises(gipf.engine.EngineError, match="'zz' is not an action"):
            engine.play("zz")
        assert engine.state()["variant"] == "basic" and engine.legal() == sorted(gipf.Game("basic").legal_actions())
        engine.play("b1-b2")
        legal = engine.legal()
        assert engine.go() in legal
        engine.undo()
        assert engine.legal() == legal
        assert "random" in engine.name()
    assert engine._process.returncode == 0, "quit, and the engine exited"
    with pytest.raises(FileNotFoundError):
        Engine(binary="/nonexistent/gipf")
