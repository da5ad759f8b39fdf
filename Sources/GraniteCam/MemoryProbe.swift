import CMalloc

#if canImport(Glibc)
import Glibc
#endif

/// One look at the process's memory: resident set and what glibc's allocator holds.
public struct MemorySample: Sendable, Equatable {
    /// Resident set size, KiB (`VmRSS` in `/proc/self/status`); 0 when unreadable.
    public var residentKiB: Int
    /// Heap space glibc took from the kernel in its arenas (sbrk + arena mmaps), bytes.
    public var arenaBytes: Int
    /// Bytes in large blocks glibc mmapped on their own, bytes.
    public var mmappedBytes: Int
    /// Bytes handed out by malloc and not yet freed.
    public var inUseBytes: Int
    /// Bytes free inside the arenas (fragmentation shows here).
    public var freeBytes: Int

    /// `rss 110.4 MB | heap in use 20.1 MB free 3.2 MB arenas 23.3 MB | mmapped 4.9 MB`.
    public var description: String {
        func mb(_ bytes: Int) -> String { MemoryProbe.oneDecimal(Double(bytes) / 1e6) }
        return "rss \(mb(residentKiB * 1024)) MB | heap in use \(mb(inUseBytes)) MB free \(mb(freeBytes)) MB"
            + " arenas \(mb(arenaBytes)) MB | mmapped \(mb(mmappedBytes)) MB"
    }
}

/// Reads and tunes the process's allocator (glibc malloc).
public enum MemoryProbe {
    /// The current resident set and allocator totals.
    public static func sample() -> MemorySample {
        let info = granite_mallinfo()
        return MemorySample(residentKiB: residentKiB(), arenaBytes: Int(info.arena), mmappedBytes: Int(info.mmapped),
                            inUseBytes: Int(info.inUse), freeBytes: Int(info.free))
    }

    /// Gives free heap pages of every arena back to the kernel; true when some were released.
    @discardableResult
    public static func trim() -> Bool { granite_malloc_trim() == 1 }

    /// Makes every allocation of at least `bytes` an mmap of its own, unmapped when freed, and stops
    /// glibc from raising that threshold; true on success.
    @discardableResult
    public static func mapLargeBlocks(atLeast bytes: Int) -> Bool {
        granite_malloc_set_mmap_threshold(Int32(clamping: bytes)) == 1
    }

    /// `VmRSS` of this process in KiB, read from `/proc/self/status` without Foundation.
    public static func residentKiB() -> Int {
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return 0 }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}
