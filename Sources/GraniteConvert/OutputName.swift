import Foundation
import GraniteCodecs

/// An output file-name template (`--name '{stem}_small.{ext}'`): `{stem}` is the input's name
/// without its extension, `{ext}` the output's extension (the `--format`'s, else the input's own);
/// `{{` and `}}` are literal braces. The folder layout is kept: the name replaces only the last
/// path component, so a template may not contain `/`.
public struct OutputName: Sendable, Equatable, Codable {
    /// The template as given.
    public let template: String
    enum Part: Equatable { case text(String), stem, ext }
    let parts: [Part]

    /// The placeholders a template may use.
    public static let placeholders = ["stem", "ext"]

    /// Parses `template`; unknown or unclosed placeholders, `/` and an empty template are typed errors.
    public init(_ template: String) throws(ConvertError) {
        func bad(_ reason: String) -> ConvertError { .badOption(option: "--name", value: template, reason: reason) }
        guard !template.isEmpty else { throw bad("the name template is empty") }
        guard !template.contains("/") else { throw bad("a name may not contain '/': the input's folder layout is kept") }
        var parts = [Part]()
        var text = ""
        var i = template.startIndex
        while i < template.endIndex {
            let c = template[i]
            let next = template.index(after: i)
            if c == "{" || c == "}", next < template.endIndex, template[next] == c {
                text.append(c)
                i = template.index(after: next)
                continue
            }
            if c == "}" { throw bad("unmatched '}' (write '}}' for a literal brace)") }
            if c == "{" {
                guard let close = template[next...].firstIndex(of: "}") else { throw bad("unclosed '{'") }
                let name = String(template[next..<close])
                if !text.isEmpty { parts.append(.text(text)); text = "" }
                switch name {
                case "stem": parts.append(.stem)
                case "ext": parts.append(.ext)
                default: throw bad("unknown placeholder '{\(name)}'; available: {stem}, {ext}")
                }
                i = template.index(after: close)
                continue
            }
            text.append(c)
            i = next
        }
        if !text.isEmpty { parts.append(.text(text)) }
        guard parts.contains(.stem) else { throw bad("the template needs {stem}, or every input would get the same name") }
        self.template = template
        self.parts = parts
    }

    /// The output path (relative) for the input at relative path `rel`, written as `format` (nil: the input's own).
    public func apply(_ rel: String, format: ImageFormat?) -> String {
        let folder = (rel as NSString).deletingLastPathComponent
        let file = (rel as NSString).lastPathComponent
        let stem = (file as NSString).deletingPathExtension
        let ext = format?.fileExtension ?? (file as NSString).pathExtension
        let name = parts.map { part -> String in
            switch part {
            case let .text(t): t
            case .stem: stem
            case .ext: ext
            }
        }.joined()
        return folder.isEmpty ? name : (folder as NSString).appendingPathComponent(name)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(text) } catch { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)")) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(template)
    }
}
