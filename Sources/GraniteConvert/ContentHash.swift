import Crypto

/// SHA-256 digests for the manifest, through swift-crypto (BoringSSL, SHA-NI where the CPU has it).
public enum ContentHash {
    /// The lowercase hex SHA-256 of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digest = SHA256.hash(data: bytes)
        var text = ""
        text.reserveCapacity(64)
        for byte in digest {
            text += byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }
        return text
    }
}
