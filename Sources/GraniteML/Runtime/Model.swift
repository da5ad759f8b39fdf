import CBLAS
import Foundation
import GraniteSync

/// An ONNX model loaded for inference on the CPU (OpenBLAS and GraniteML's own kernels).
///
/// Loading parses the file, checks that every node's op is supported, folds constants and
/// fuses what it can; when the inputs have fixed shapes it also plans the run up front, so
/// a bad shape or attribute fails at load with the node's name. Each distinct set of input
/// shapes gets one plan with a preallocated arena; runs are serialised.
///
/// ```swift
/// let model = try Model(path: "ppocr-v4-det.onnx", threads: 2)
/// let out = try model.run(["x": try Tensor(shape: [1, 3, 640, 640], values: pixels)])
/// ```
public final class Model: ModelRunner {
    /// The file the model came from.
    public let path: String
    /// Declared inputs (initializers excluded).
    public let inputs: [ValueInfo]
    /// Declared outputs.
    public let outputs: [ValueInfo]
    /// Threads for GraniteML's kernels, GEMMs included (split by columns; OpenBLAS itself is
    /// kept single-threaded so that one pool of workers serves everything).
    public let threads: Int
    /// The most bytes one plan may allocate for activations, scratch and run-time constants;
    /// shapes (declared, or inferred from attributes) that need more fail with a typed error
    /// instead of exhausting memory.
    public let memoryLimit: Int
    /// The mean/std normalisation the graph applies to its (single) input itself, if it
    /// starts with one (see ``InputNormalization``).
    public let inputNormalization: InputNormalization?
    private let graph: Graph
    private let plans: Locked<PlanCache>

    /// The default thread count: every active processor.
    public static var defaultThreads: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// The default ``memoryLimit``: 4 GiB.
    public static let defaultMemoryLimit = 4 << 30

    /// Loads and checks the model at `path`.
    public convenience init(path: String, threads: Int = Model.defaultThreads,
                            memoryLimit: Int = Model.defaultMemoryLimit) throws(MLError) {
        try self.init(graph: OnnxLoader.load(path: path), threads: threads, memoryLimit: memoryLimit)
    }

    /// Loads and checks a model from its serialised bytes; `name` names it in errors.
    public convenience init(data: Data, name: String = "<memory>", threads: Int = Model.defaultThreads,
                            memoryLimit: Int = Model.defaultMemoryLimit) throws(MLError) {
        try self.init(graph: OnnxLoader.parse(data, path: name), threads: threads, memoryLimit: memoryLimit)
    }

    /// Loads the model at `path` with some inputs bound to fixed values, which then count as
    /// weights (folded, and allowed where an op needs a constant). For the ONNX node tests,
    /// whose weights, shapes and scales arrive as graph inputs.
    convenience init(path: String, binding: [String: Tensor], threads: Int = 1) throws(MLError) {
        var graph = try OnnxLoader.load(path: path)
        for (name, tensor) in binding {
            graph.constants[name] = tensor
            graph.inputs.removeAll { $0.name == name }
        }
        try self.init(graph: graph, threads: threads, memoryLimit: Model.defaultMemoryLimit)
    }

    private init(graph parsed: Graph, threads: Int, memoryLimit: Int) throws(MLError) {
        for node in parsed.nodes where !Ops.supported.contains(node.op) || !(node.domain.isEmpty || node.domain == "ai.onnx") {
            throw .unsupportedOp(node: node.name, op: node.domain.isEmpty ? node.op : "\(node.domain).\(node.op)",
                                 reason: "GraniteML has no kernel for it")
        }
        path = parsed.path
        inputs = parsed.inputs
        outputs = parsed.outputs
        self.threads = max(threads, 1)
        self.memoryLimit = memoryLimit
        inputNormalization = parsed.inputs.count == 1 ? InputNormalization.detect(in: parsed, input: parsed.inputs[0].name) : nil
        graph = try Optimizer.optimize(parsed, memoryLimit: memoryLimit)
        plans = Locked(PlanCache())
        if let fixed = fixedInputShapes {
            let plan = try Planner(graph: graph, threads: self.threads, memoryLimit: memoryLimit).plan(inputShapes: fixed)
            plans.withLock { $0.insert(plan) }
        }
    }

    /// Checks `feeds` against the declared inputs (names, shapes, element types) and returns their shapes.
    package func checkFeeds(_ feeds: [String: Tensor]) throws(MLError) -> [String: [Int]] {
        for name in feeds.keys where !inputs.contains(where: { $0.name == name }) {
            throw .unknownInput(name: name, known: inputs.map(\.name))
        }
        var shapes: [String: [Int]] = [:]
        for info in inputs {
            guard let tensor = feeds[info.name] else { throw .missingInput(name: info.name) }
            guard info.accepts(tensor.shape) else {
                throw .inputShapeMismatch(name: info.name, expected: info.description, actual: tensor.shape)
            }
            guard tensor.elementType == info.elementType else {
                throw .inputTypeMismatch(name: info.name, expected: info.elementType, actual: tensor.elementType)
            }
            shapes[info.name] = tensor.shape
        }
        return shapes
    }

    /// Runs the model on `feeds` (one tensor per declared input) and returns every output.
    public func run(_ feeds: [String: Tensor]) throws(MLError) -> [String: Tensor] {
        let shapes = try checkFeeds(feeds)
        let graph = self.graph, threads = self.threads, memoryLimit = self.memoryLimit
        let result: Result<[String: Tensor], MLError> = plans.withLock { cache in
            do throws(MLError) {
                let plan = try cache.plan(for: shapes) { () throws(MLError) in
                    try Planner(graph: graph, threads: threads, memoryLimit: memoryLimit).plan(inputShapes: shapes)
                }
                for (name, tensor) in feeds { plan.load(name, tensor) }
                granite_blas_set_threads(1)
                withWorkersHeld(threads: threads) { plan.execute() }
                return .success(plan.results())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Runs `runs` times with every step timed: for each op type the sum over its steps of each
    /// step's fastest time, in milliseconds, largest first (for tuning on a busy machine).
    public func profile(_ feeds: [String: Tensor], runs: Int = 5) throws(MLError) -> [(op: String, milliseconds: Double, steps: Int)] {
        _ = try run(feeds)  // plans, validates and warms up
        let shapes = feeds.mapValues(\.shape), threads = self.threads
        let timings: [(node: String, op: String, nanos: UInt64)] = plans.withLock { cache in
            guard let plan = try? cache.plan(for: shapes, make: { () throws(MLError) in throw .missingInput(name: "") }) else { return [] }
            var best: [(node: String, op: String, nanos: UInt64)] = []
            for _ in 0..<max(runs, 1) {
                for (name, tensor) in feeds { plan.load(name, tensor) }
                granite_blas_set_threads(1)
                let times = withWorkersHeld(threads: threads) { plan.executeTimed() }
                best = best.isEmpty ? times : zip(best, times).map { ($0.node, $0.op, min($0.nanos, $1.nanos)) }
            }
            return best
        }
        var byOp: [String: (Double, Int)] = [:]
        for t in timings { byOp[t.op, default: (0, 0)].0 += Double(t.nanos) / 1e6; byOp[t.op, default: (0, 0)].1 += 1 }
        return byOp.map { ($0.key, $0.value.0, $0.value.1) }.sorted { $0.milliseconds > $1.milliseconds }
    }

    /// Floats in the activation arena planned for these input shapes (planning if needed).
    public func arenaSize(for shapes: [String: [Int]]) throws(MLError) -> Int {
        let graph = self.graph, threads = self.threads, memoryLimit = self.memoryLimit
        let result: Result<Int, MLError> = plans.withLock { cache in
            do throws(MLError) {
                return .success(try cache.plan(for: shapes) { () throws(MLError) in
                    try Planner(graph: graph, threads: threads, memoryLimit: memoryLimit).plan(inputShapes: shapes)
                }.arenaFloats)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// The optimised graph lowered for these input shapes (for backends other than the CPU's).
    package func lowered(inputShapes: [String: [Int]]) throws(MLError) -> Lowering {
        try Planner(graph: graph, threads: threads, memoryLimit: memoryLimit).lower(inputShapes: inputShapes)
    }

    /// The input shapes a run needs, checked against the declared inputs (the declared shape
    /// where it is fixed).
    package var fixedInputShapes: [String: [Int]]? {
        let fixed = inputs.compactMap { info in info.dimensions.allSatisfy { $0 != nil } ? (info.name, info.dimensions.map { $0! }) : nil }
        return fixed.count == inputs.count ? Dictionary(uniqueKeysWithValues: fixed) : nil
    }

    /// The ops of the optimised graph, in order (for tests and diagnostics).
    package var plannedOps: [String] { graph.nodes.map { $0.epilogue.isEmpty ? $0.op : "\($0.op)+\($0.epilogue.count)" } }

    /// The instruction set GraniteML's C kernels use on this machine ("avx512vnni", "avx2",
    /// "portable"), after any `GRANITE_ML_ISA` cap.
    public static var kernelInstructionSet: String {
        switch KernelLevel.current {
        case KernelLevel.avx512vnni: "avx512vnni"
        case KernelLevel.avx2: "avx2"
        default: "portable"
        }
    }

    /// How many Conv nodes were matched to the int8 kernels (tests).
    var quantizedConvs: Int { graph.nodes.filter { $0.quantized != nil }.count }
}

/// Plans by input shapes; keeps the few most recent (a camera rarely changes size).
struct PlanCache: ~Copyable {
    private var plans: [Plan] = []

    mutating func insert(_ plan: Plan) {
        plans.insert(plan, at: 0)
        if plans.count > 4 { plans.removeLast() }
    }

    mutating func plan(for shapes: [String: [Int]], make: () throws(MLError) -> Plan) throws(MLError) -> Plan {
        if let hit = plans.first(where: { $0.inputShapes == shapes }) { return hit }
        let plan = try make()
        insert(plan)
        return plan
    }
}

/// Something that runs a loaded model: the CPU ``Model`` itself, or a GPU backend built from
/// one (GraniteMLVulkan's `VulkanModel`). ``GraniteML`` and ``DepthEstimator`` predict through one.
public protocol ModelRunner: Sendable {
    /// Runs on `feeds` (one tensor per declared input) and returns every output.
    func run(_ feeds: [String: Tensor]) throws(MLError) -> [String: Tensor]
}
