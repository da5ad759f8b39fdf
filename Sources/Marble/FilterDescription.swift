/// What a filter is: its name, a one-line summary and its typed parameters.
public struct FilterDescription: Sendable, Equatable {
    /// The name used in specs (`blur`, `godRay`).
    public let name: String
    /// One line saying what it does.
    public let summary: String
    /// Its parameters, in the order they are listed.
    public let parameters: [ParameterDescription]

    /// Describes a filter.
    public init(name: String, summary: String, parameters: [ParameterDescription]) {
        self.name = name
        self.summary = summary
        self.parameters = parameters
    }

    /// The parameter called `name`, if the filter has one.
    public func parameter(_ name: String) -> ParameterDescription? {
        parameters.first { $0.name == name }
    }
}

/// One typed parameter: its name, kind (with range or choices and default) and what it means.
public struct ParameterDescription: Sendable, Equatable {
    /// The name used in specs (`sigma`).
    public let name: String
    /// Type, range and default.
    public let kind: ParameterKind
    /// One line saying what it controls.
    public let summary: String

    /// Describes a parameter.
    public init(_ name: String, _ kind: ParameterKind, _ summary: String) {
        self.name = name
        self.kind = kind
        self.summary = summary
    }

    /// The default value.
    public var defaultValue: ParameterValue {
        switch kind {
        case let .float(_, _, value): return .float(value)
        case let .int(_, _, value): return .int(value)
        case let .choice(_, value): return .choice(value)
        case let .text(value): return .text(value)
        }
    }
}

/// A parameter's type with its valid values and default.
public enum ParameterKind: Sendable, Equatable, CustomStringConvertible {
    /// A number in `min...max`.
    case float(min: Float, max: Float, default: Float)
    /// An integer in `min...max`.
    case int(min: Int, max: Int, default: Int)
    /// One of a fixed set of words.
    case choice([String], default: String)
    /// Free text such as a file path (it cannot hold `,` or `|`, which separate a spec's values and
    /// a chain's filters).
    case text(default: String)

    /// What is valid, for listings and errors (`0...10`, `one of normal|screen`).
    public var validValues: String {
        switch self {
        case let .float(min, max, _): return "a number in \(ParameterValue.float(min))...\(ParameterValue.float(max))"
        case let .int(min, max, _): return "an integer in \(min)...\(max)"
        case let .choice(words, _): return "one of " + words.joined(separator: "|")
        case .text: return "text without ',' or '|'"
        }
    }

    /// `float 0...1, default 0.5` and the like.
    public var description: String {
        switch self {
        case let .float(min, max, value): return "float \(ParameterValue.float(min))...\(ParameterValue.float(max)), default \(ParameterValue.float(value))"
        case let .int(min, max, value): return "int \(min)...\(max), default \(value)"
        case let .choice(words, value): return "\(words.joined(separator: "|")), default \(value)"
        case let .text(value): return value.isEmpty ? "text, default none" : "text, default \(value)"
        }
    }
}

/// A parameter's value.
public enum ParameterValue: Sendable, Equatable, CustomStringConvertible {
    /// A number.
    case float(Float)
    /// An integer.
    case int(Int)
    /// One of the parameter's words.
    case choice(String)
    /// Free text (a file path).
    case text(String)

    /// The value as written in specs.
    public var description: String {
        switch self {
        case let .float(value):
            return value == value.rounded() && abs(value) < 1e7 ? String(Int(value)) : "\(value)"
        case let .int(value): return String(value)
        case let .choice(word): return word
        case let .text(text): return text
        }
    }
}
