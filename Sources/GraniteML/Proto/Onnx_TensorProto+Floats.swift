extension Onnx_TensorProto {
    /// A float32 initializer, `values` in `float_data`: what ``OnnxLoader`` reads back as a
    /// constant. For building small models in memory (GraniteML's and GraniteMLVulkan's tests).
    init(name: String, shape: [Int], floats values: [Float]) {
        self.init()
        self.name = name
        dims = shape.map { Int64($0) }
        dataType = 1
        floatData = values
    }
}
