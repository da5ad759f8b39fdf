/// Appends protobuf wire-format fields: the few that dag-pb, UnixFS and CARv1 need.
///
/// Only varints (wire type 0) and length-delimited fields (wire type 2). Written by hand:
/// these messages have four fields each, so a code generator would cost more than it saves.
struct ProtobufWriter {
    /// The encoded bytes so far.
    var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Appends `value` as an unsigned LEB128 varint (no tag).
    mutating func varint(_ value: UInt64) {
        Varint.append(value, to: &bytes)
    }

    /// Appends a varint field `number = value`.
    mutating func field(_ number: Int, _ value: UInt64) {
        varint(UInt64(number << 3))
        varint(value)
    }

    /// Appends a length-delimited field `number = data`.
    mutating func field(_ number: Int, bytes data: some Collection<UInt8>) {
        varint(UInt64(number << 3 | 2))
        varint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }
}

/// Unsigned LEB128 varints, as protobuf, multiformats and CAR use them.
enum Varint {
    /// Appends `value` to `out`.
    static func append(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    /// The encoding of `value`.
    static func encode(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    /// Number of bytes `value` takes.
    static func size(_ value: UInt64) -> Int {
        var n = 1
        var v = value
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    /// Reads a varint at `index`, advancing it; nil if the bytes end first or it exceeds 64 bits.
    static func read(_ bytes: some RandomAccessCollection<UInt8>, at index: inout Int) -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var i = bytes.index(bytes.startIndex, offsetBy: index)
        while i != bytes.endIndex, shift < 64 {
            let b = bytes[i]
            result |= UInt64(b & 0x7F) << shift
            i = bytes.index(after: i)
            index += 1
            if b & 0x80 == 0 { return result }
            shift += 7
        }
        return nil
    }
}
