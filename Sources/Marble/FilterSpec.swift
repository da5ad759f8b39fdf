import Foundation

/// One filter with its parameter values, as parsed from text like `blur:sigma=2`.
///
/// Every parameter of the filter has a value: the ones not given take their defaults.
public struct FilterSpec: Sendable, Equatable, CustomStringConvertible {
    /// The filter's name (as in `Marble.catalog`).
    public let name: String
    /// A value for every parameter of the filter.
    public let values: [String: ParameterValue]

    /// A spec for `name` with `values` checked against the catalog; missing ones take defaults.
    public init(name: String, values: [String: ParameterValue] = [:]) throws(MarbleError) {
        guard let description = Marble.description(of: name) else {
            throw MarbleError.unknownFilter(name: name, valid: Marble.catalog.map(\.name))
        }
        var all: [String: ParameterValue] = [:]
        for parameter in description.parameters { all[parameter.name] = parameter.defaultValue }
        for (key, value) in values {
            guard let parameter = description.parameter(key) else {
                throw MarbleError.unknownParameter(filter: name, name: key, valid: description.parameters.map(\.name))
            }
            all[key] = try FilterSpec.check(value, parameter, filter: name)
        }
        self.name = name
        self.values = all
    }

    /// Parses `name` or `name:key=value,key=value` (spaces around parts are ignored).
    public static func parse(_ text: String) throws(MarbleError) -> FilterSpec {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let head = trimmed.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let name = head[0].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw MarbleError.malformedSpec(text: text, reason: "no filter name") }
        if head.count == 1, let unnamed = unnamedValue(name, text: text) { throw unnamed }
        guard let description = Marble.description(of: name) else {
            throw MarbleError.unknownFilter(name: name, valid: Marble.catalog.map(\.name))
        }
        var values: [String: ParameterValue] = [:]
        if head.count == 2 {
            for part in head[1].split(separator: ",", omittingEmptySubsequences: false) {
                let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = pair[0].trimmingCharacters(in: .whitespaces)
                guard pair.count == 2, !key.isEmpty else {
                    throw MarbleError.malformedSpec(text: text, reason: "\"\(part)\" is not key=value")
                }
                guard let parameter = description.parameter(key) else {
                    throw MarbleError.unknownParameter(filter: name, name: key, valid: description.parameters.map(\.name))
                }
                guard values[key] == nil else { throw MarbleError.duplicateParameter(filter: name, name: key) }
                values[key] = try parseValue(pair[1].trimmingCharacters(in: .whitespaces), parameter, filter: name)
            }
        }
        return try FilterSpec(name: name, values: values)
    }

    /// The error for `name=value` naming a filter (`sharpen=1`): one spelling per filter, so the
    /// value is refused with how to write it — `sharpen:amount=1` when it fits the filter's first
    /// parameter, else the filter's keys. Nil when `name` is no such text.
    private static func unnamedValue(_ name: String, text: String) -> MarbleError? {
        let pair = name.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard pair.count == 2 else { return nil }
        let filter = pair[0].trimmingCharacters(in: .whitespaces), value = pair[1].trimmingCharacters(in: .whitespaces)
        guard let description = Marble.description(of: filter) else { return nil }
        guard let first = description.parameters.first else {
            return MarbleError.unnamedValue(text: text, spelling: "\(filter) (it takes no values)")
        }
        if (try? parseValue(value, first, filter: filter)) != nil {
            return MarbleError.unnamedValue(text: text, spelling: "\(filter):\(first.name)=\(value)")
        }
        let keys = description.parameters.map(\.name).joined(separator: ", ")
        return MarbleError.unnamedValue(text: text, spelling: "\(filter):key=value with key one of \(keys)")
    }

    /// Parses a chain written as specs separated by `|` (`yuyv | blur:sigma=2 | sobel`).
    public static func parseChain(_ text: String) throws(MarbleError) -> [FilterSpec] {
        let parts = text.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !parts.isEmpty else { throw MarbleError.emptyChain }
        return try parts.map(parse)
    }

    /// The spec as text with every parameter (parses back to an equal spec).
    public var description: String {
        guard let filter = Marble.description(of: name), !filter.parameters.isEmpty else { return name }
        return name + ":" + filter.parameters.map { "\($0.name)=\(values[$0.name]!)" }.joined(separator: ",")
    }

    func float(_ key: String) -> Float {
        switch values[key] {
        case let .float(value)?: return value
        case let .int(value)?: return Float(value)
        default: preconditionFailure("\(name) has no number parameter \(key)")
        }
    }

    func int(_ key: String) -> Int {
        guard case let .int(value)? = values[key] else { preconditionFailure("\(name) has no int parameter \(key)") }
        return value
    }

    func choice(_ key: String) -> String {
        guard case let .choice(value)? = values[key] else { preconditionFailure("\(name) has no choice parameter \(key)") }
        return value
    }

    func text(_ key: String) -> String {
        guard case let .text(value)? = values[key] else { preconditionFailure("\(name) has no text parameter \(key)") }
        return value
    }

    private static func parseValue(_ text: String, _ parameter: ParameterDescription, filter: String) throws(MarbleError) -> ParameterValue {
        let invalid = MarbleError.invalidValue(filter: filter, parameter: parameter.name, value: text, valid: parameter.kind.validValues)
        switch parameter.kind {
        case .float:
            guard let value = Float(text), value.isFinite else { throw invalid }
            return try check(.float(value), parameter, filter: filter)
        case .int:
            // Decimal, or hexadecimal after 0x (colours: 0xRRGGBB).
            let hex = text.hasPrefix("0x") || text.hasPrefix("0X") ? Int(text.dropFirst(2), radix: 16) : nil
            guard let value = Int(text) ?? hex else { throw invalid }
            return try check(.int(value), parameter, filter: filter)
        case .choice:
            return try check(.choice(text), parameter, filter: filter)
        case .text:
            return try check(.text(text), parameter, filter: filter)
        }
    }

    private static func check(_ value: ParameterValue, _ parameter: ParameterDescription, filter: String) throws(MarbleError) -> ParameterValue {
        let invalid = MarbleError.invalidValue(filter: filter, parameter: parameter.name, value: value.description,
                                               valid: parameter.kind.validValues)
        switch (parameter.kind, value) {
        case let (.float(min, max, _), .float(number)):
            guard number >= min, number <= max else { throw invalid }
            return value
        case let (.float(min, max, _), .int(number)):
            guard Float(number) >= min, Float(number) <= max else { throw invalid }
            return .float(Float(number))
        case let (.int(min, max, _), .int(number)):
            guard number >= min, number <= max else { throw invalid }
            return value
        case let (.choice(words, _), .choice(word)):
            guard words.contains(word) else { throw invalid }
            return value
        case let (.text, .text(text)):
            guard !text.contains(","), !text.contains("|") else { throw invalid }
            return value
        default:
            throw invalid
        }
    }
}
