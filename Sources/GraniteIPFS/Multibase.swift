/// The two multibase encodings CIDs use here: base58btc (CIDv0) and base32 lower ('b', CIDv1).
enum Multibase {
    private static let base58Alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)
    private static let base32Alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// Bitcoin base58 of `bytes` (leading zero bytes become '1').
    static func base58(_ bytes: [UInt8]) -> String {
        let zeros = bytes.prefix { $0 == 0 }.count
        var digits: [UInt8] = []  // base-58 digits, least significant first
        for byte in bytes[zeros...] {
            var carry = Int(byte)
            for i in digits.indices {
                carry += Int(digits[i]) << 8
                digits[i] = UInt8(carry % 58)
                carry /= 58
            }
            while carry > 0 {
                digits.append(UInt8(carry % 58))
                carry /= 58
            }
        }
        let chars = [UInt8](repeating: base58Alphabet[0], count: zeros) + digits.reversed().map { base58Alphabet[Int($0)] }
        return String(decoding: chars, as: UTF8.self)
    }

    /// Decodes base58btc; nil on a character outside the alphabet.
    static func decodeBase58(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        let zeros = chars.prefix { $0 == base58Alphabet[0] }.count
        var bytes: [UInt8] = []  // least significant first
        for c in chars[zeros...] {
            guard let value = base58Alphabet.firstIndex(of: c) else { return nil }
            var carry = value
            for i in bytes.indices {
                carry += Int(bytes[i]) * 58
                bytes[i] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        return [UInt8](repeating: 0, count: zeros) + bytes.reversed()
    }

    /// RFC 4648 base32, lower case, no padding (multibase 'b' without its prefix).
    static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(base32Alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(base32Alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded base32 (either case); nil on a character outside the alphabet.
    static func decodeBase32(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for c in text.lowercased().utf8 {
            guard let value = base32Alphabet.firstIndex(of: c) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }
}
