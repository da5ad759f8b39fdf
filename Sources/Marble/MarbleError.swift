import GraniteGPU
import GraniteMedia

/// Errors from describing, parsing and running filters.
public enum MarbleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The spec text is not `name` or `name:key=value,...`.
    case malformedSpec(text: String, reason: String)
    /// A value given without its parameter's name (`sharpen=1`); `spelling` is how to write it
    /// (`sharpen:amount=1`, or the filter's keys when the value fits none).
    case unnamedValue(text: String, spelling: String)
    /// No filter has this name.
    case unknownFilter(name: String, valid: [String])
    /// The filter has no parameter of this name.
    case unknownParameter(filter: String, name: String, valid: [String])
    /// The parameter was given twice.
    case duplicateParameter(filter: String, name: String)
    /// The value is not of the parameter's type or outside its range.
    case invalidValue(filter: String, parameter: String, value: String, valid: String)
    /// The filter cannot run on an image of this size (a crop outside it, ...).
    case invalidGeometry(filter: String, reason: String)
    /// The chain cannot take this input format.
    case unsupportedInput(PixelFormat)
    /// A depth map was not a `grayF32` image.
    case invalidDepth(reason: String)
    /// An empty chain was asked for where one filter at least is needed.
    case emptyChain
    /// Two filters of the chain cannot run together (`background` and a depth filter both read
    /// the chain's one auxiliary plane).
    case conflictingFilters(first: String, second: String, reason: String)
    /// A file a filter reads when its chain is built (`background:image=PATH`) is missing or is
    /// no image GraniteCodecs reads; `reason` is the codec's message.
    case unreadableImage(filter: String, path: String, reason: String)
    /// The GPU failed (no driver, a Vulkan call, a buffer): GraniteGPU's error, unchanged.
    case gpu(GPUError)
    /// An image could not be made or converted: GraniteMedia's error, unchanged.
    case image(MediaError)

    /// The message, naming the filter, parameter and what is valid.
    public var description: String {
        switch self {
        case let .malformedSpec(text, reason):
            return "filter spec \"\(text)\": \(reason) (expected name or name:key=value,key=value)"
        case let .unnamedValue(text, spelling):
            return "filter spec \"\(text)\": a filter's values are named; write \(spelling)"
        case let .unknownFilter(name, valid):
            return "unknown filter \"\(name)\"; valid filters: \(valid.joined(separator: ", "))"
        case let .unknownParameter(filter, name, valid):
            return "filter \(filter) has no parameter \"\(name)\"; valid: "
                + (valid.isEmpty ? "none" : valid.joined(separator: ", "))
        case let .duplicateParameter(filter, name):
            return "filter \(filter): parameter \(name) given twice"
        case let .invalidValue(filter, parameter, value, valid):
            return "filter \(filter): \(parameter)=\(value) is invalid; expected \(valid)"
        case let .invalidGeometry(filter, reason):
            return "filter \(filter): \(reason)"
        case let .unsupportedInput(format):
            return "filter chains take rgba8, rgb24, yuyv or nv12 images, not \(format)"
        case let .invalidDepth(reason):
            return "depth map: \(reason)"
        case .emptyChain:
            return "the filter chain is empty"
        case let .conflictingFilters(first, second, reason):
            return "filters \(first) and \(second) cannot share a chain: \(reason)"
        case let .unreadableImage(filter, path, reason):
            return "filter \(filter): cannot read the image \(path): \(reason)"
        case let .gpu(error):
            return error.description
        case let .image(error):
            return error.description
        }
    }
}

extension MarbleError {
    /// Runs GPU work; its failure becomes ``MarbleError/gpu(_:)``.
    @inline(__always)
    static func gpu<T>(_ body: () throws(GPUError) -> T) throws(MarbleError) -> T {
        do { return try body() } catch { throw .gpu(error) }
    }

    /// Makes or converts an image; its failure becomes ``MarbleError/image(_:)``.
    @inline(__always)
    static func image<T>(_ body: () throws(MediaError) -> T) throws(MarbleError) -> T {
        do { return try body() } catch { throw .image(error) }
    }
}
