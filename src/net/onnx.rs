//! The folded network (the layers of `folded.rs`) written as an ONNX model: the
//! graph ONNX Runtime runs at play and the `model.onnx` that `gipf export`
//! gives other front-ends. Input `planes`, `[N, 19, 7, 7]` float32; output
//! `policy_value`, `[N, NUM_ACTIONS + 1]`: the policy logits over the action
//! indices, then the value for the player to act, in [-1, 1].
//!
//! The few messages of `onnx.proto` that such a model uses are declared
//! here for prost, with the field numbers of the ONNX specification.

use prost::Message;
use tch::{Kind, Tensor};

use super::folded::{Dense, FoldedConv, FoldedNet};
use crate::encoding::{GRID, NUM_PLANES};

/// The model's input and output names.
pub const INPUT: &str = "planes";
pub const OUTPUT: &str = "policy_value";

/// The operator set the graph is written in, and the file format version
/// (IR 8) that goes with it.
const OPSET: i64 = 17;
const IR_VERSION: i64 = 8;
/// `TensorProto.DataType.FLOAT`.
const FLOAT: i32 = 1;
/// `AttributeProto.AttributeType` INT and INTS.
const ATTRIBUTE_INT: i32 = 2;
const ATTRIBUTE_INTS: i32 = 7;

#[derive(Clone, PartialEq, Message)]
struct ModelProto {
    #[prost(int64, tag = "1")]
    ir_version: i64,
    #[prost(string, tag = "2")]
    producer_name: String,
    #[prost(message, optional, tag = "7")]
    graph: Option<GraphProto>,
    #[prost(message, repeated, tag = "8")]
    opset_import: Vec<OperatorSetIdProto>,
}

#[derive(Clone, PartialEq, Message)]
struct OperatorSetIdProto {
    #[prost(string, tag = "1")]
    domain: String,
    #[prost(int64, tag = "2")]
    version: i64,
}

#[derive(Clone, PartialEq, Message)]
struct GraphProto {
    #[prost(message, repeated, tag = "1")]
    node: Vec<NodeProto>,
    #[prost(string, tag = "2")]
    name: String,
    #[prost(message, repeated, tag = "5")]
    initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    output: Vec<ValueInfoProto>,
}

#[derive(Clone, PartialEq, Message)]
struct NodeProto {
    #[prost(string, repeated, tag = "1")]
    input: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    output: Vec<String>,
    #[prost(string, tag = "3")]
    name: String,
    #[prost(string, tag = "4")]
    op_type: String,
    #[prost(message, repeated, tag = "5")]
    attribute: Vec<AttributeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct AttributeProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(int64, tag = "3")]
    i: i64,
    #[prost(int64, repeated, tag = "8")]
    ints: Vec<i64>,
    #[prost(int32, tag = "20")]
    r#type: i32,
}

#[derive(Clone, PartialEq, Message)]
struct TensorProto {
    #[prost(int64, repeated, tag = "1")]
    dims: Vec<i64>,
    #[prost(int32, tag = "2")]
    data_type: i32,
    #[prost(string, tag = "8")]
    name: String,
    /// The values, little-endian, in row-major order.
    #[prost(bytes = "vec", tag = "9")]
    raw_data: Vec<u8>,
}

#[derive(Clone, PartialEq, Message)]
struct ValueInfoProto {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(message, optional, tag = "2")]
    r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TypeProto {
    #[prost(message, optional, tag = "1")]
    tensor_type: Option<TensorTypeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorTypeProto {
    #[prost(int32, tag = "1")]
    elem_type: i32,
    #[prost(message, optional, tag = "2")]
    shape: Option<TensorShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
struct TensorShapeProto {
    #[prost(message, repeated, tag = "1")]
    dim: Vec<Dimension>,
}

#[derive(Clone, PartialEq, Message)]
struct Dimension {
    #[prost(int64, optional, tag = "1")]
    dim_value: Option<i64>,
    #[prost(string, optional, tag = "2")]
    dim_param: Option<String>,
}

/// A float32 tensor value of the graph, of these dimensions (`None`: the
/// batch, named `N`).
fn value_info(name: &str, dims: &[Option<i64>]) -> ValueInfoProto {
    let dim =
        dims.iter().map(|d| Dimension { dim_value: *d, dim_param: d.is_none().then(|| "N".to_string()) }).collect();
    let tensor_type = TensorTypeProto { elem_type: FLOAT, shape: Some(TensorShapeProto { dim }) };
    ValueInfoProto { name: name.into(), r#type: Some(TypeProto { tensor_type: Some(tensor_type) }) }
}

fn int_attribute(name: &str, i: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i, ints: Vec::new(), r#type: ATTRIBUTE_INT }
}

fn ints_attribute(name: &str, ints: Vec<i64>) -> AttributeProto {
    AttributeProto { name: name.into(), i: 0, ints, r#type: ATTRIBUTE_INTS }
}

/// Builds the graph node by node, naming each output after its node.
#[derive(Default)]
struct Graph {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
}

impl Graph {
    /// Adds a node; returns the name of its output.
    fn node(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        let name = format!("{}_{}", op.to_lowercase(), self.nodes.len());
        let input = inputs.iter().map(|s| s.to_string()).collect();
        self.nodes.push(NodeProto {
            input,
            output: vec![name.clone()],
            name: name.clone(),
            op_type: op.into(),
            attribute,
        });
        name
    }

    /// Adds a constant: `tensor`'s values in float32.
    fn constant(&mut self, name: &str, tensor: &Tensor) -> String {
        let tensor = tensor.to_kind(Kind::Float).contiguous();
        let values = Vec::<f32>::try_from(tensor.view(-1)).expect("float32 weights");
        self.initializers.push(TensorProto {
            dims: tensor.size(),
            data_type: FLOAT,
            name: name.into(),
            raw_data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        });
        name.into()
    }

    fn conv(&mut self, name: &str, x: &str, layer: &FoldedConv) -> String {
        let weight = self.constant(&format!("{name}.weight"), &layer.weight);
        let bias = self.constant(&format!("{name}.bias"), &layer.bias);
        let pads = ints_attribute("pads", vec![layer.padding; 4]);
        self.node("Conv", &[x, &weight, &bias], vec![pads])
    }

    fn dense(&mut self, name: &str, x: &str, layer: &Dense) -> String {
        let weight = self.constant(&format!("{name}.weight"), &layer.weight);
        let bias = self.constant(&format!("{name}.bias"), &layer.bias);
        self.node("Gemm", &[x, &weight, &bias], vec![int_attribute("transB", 1)])
    }

    fn relu(&mut self, x: &str) -> String {
        self.node("Relu", &[x], Vec::new())
    }

    fn flatten(&mut self, x: &str) -> String {
        self.node("Flatten", &[x], vec![int_attribute("axis", 1)])
    }
}

/// The ONNX model of `net`, serialised: the same function as
/// `FoldedNet::forward`, with its two outputs joined.
pub(crate) fn model(net: &FoldedNet) -> Vec<u8> {
    let mut g = Graph::default();
    let mut x = g.conv("stem", INPUT, &net.stem);
    x = g.relu(&x);
    for (i, (conv1, conv2)) in net.blocks.iter().enumerate() {
        let y = g.conv(&format!("blocks.{i}.conv1"), &x, conv1);
        let y = g.relu(&y);
        let y = g.conv(&format!("blocks.{i}.conv2"), &y, conv2);
        let sum = g.node("Add", &[&y, &x], Vec::new());
        x = g.relu(&sum);
    }
    let policy = g.conv("policy_conv", &x, &net.policy_conv);
    let policy = g.relu(&policy);
    let policy = g.flatten(&policy);
    let policy = g.dense("policy_fc", &policy, &net.policy_fc);
    let value = g.conv("value_conv", &x, &net.value_conv);
    let value = g.relu(&value);
    let mut features = g.flatten(&value);
    if net.value_pooling {
        let pooled = g.node("GlobalAveragePool", &[&x], Vec::new());
        let pooled = g.flatten(&pooled);
        features = g.node("Concat", &[&features, &pooled], vec![int_attribute("axis", 1)]);
    }
    let hidden = g.dense("value_fc1", &features, &net.value_fc1);
    let hidden = g.relu(&hidden);
    let value = g.dense("value_fc2", &hidden, &net.value_fc2);
    let value = g.node("Tanh", &[&value], Vec::new());
    g.node("Concat", &[&policy, &value], vec![int_attribute("axis", 1)]);
    g.nodes.last_mut().expect("the graph has nodes").output = vec![OUTPUT.into()];

    let (planes, grid) = (NUM_PLANES as i64, GRID as i64);
    let outputs = crate::encoding::NUM_ACTIONS as i64 + 1;
    let graph = GraphProto {
        node: g.nodes,
        name: "gipf".into(),
        initializer: g.initializers,
        input: vec![value_info(INPUT, &[None, Some(planes), Some(grid), Some(grid)])],
        output: vec![value_info(OUTPUT, &[None, Some(outputs)])],
    };
    ModelProto {
        ir_version: IR_VERSION,
        producer_name: "gipf".into(),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: OPSET }],
    }
    .encode_to_vec()
}
