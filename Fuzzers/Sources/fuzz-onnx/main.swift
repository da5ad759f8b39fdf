// The ONNX loader from bytes, as `Model(data:)` does it: protobuf parse, tensors and attributes,
// op checks, constant folding and fusion, and the up-front plan for fixed input shapes.
import Foundation
import FuzzSupport
import GraniteML

fuzzMain { data in
    // 256 MiB: plans past it are refused (a typed error) well below the fuzzer's 2 GiB limit.
    _ = try? Model(data: Data(buffer: data), name: "fuzz.onnx", threads: 1, memoryLimit: 256 << 20)
}
