import Foundation
import Testing
@testable import GraniteGPU
import GraniteTesting

/// The memory policy against the memory tables real drivers report (the layouts vulkaninfo prints
/// for these devices: which types exist, their flags and heaps; heap sizes rounded), so where each
/// buffer role lands is checked for hardware this machine does not have.
struct MemoryPolicyTests {
    typealias T = MemoryTable.MemoryType
    typealias H = MemoryTable.Heap
    static let gib: UInt64 = 1 << 30
    static let mib: UInt64 = 1 << 20
    static let DL: MemoryTypeFlags = .deviceLocal
    static let HV: MemoryTypeFlags = .hostVisible
    static let HC: MemoryTypeFlags = .hostCoherent
    static let cached: MemoryTypeFlags = .hostCached
    static let amd: MemoryTypeFlags = [.deviceCoherentAMD, .deviceUncachedAMD]
    typealias Choices = [GPUMemoryRole: Int]

    /// NVIDIA proprietary driver, discrete GPU without resizable BAR (e.g. GeForce RTX 3060,
    /// driver 5xx): VRAM, system RAM, and the 256 MiB BAR window as a third device-local heap.
    static let nvidiaNoBAR = MemoryTable(
        types: [T([], heap: 1), T(DL, heap: 0), T([HV, HC], heap: 1), T([HV, HC, cached], heap: 1), T([DL, HV, HC], heap: 2)],
        heaps: [H(size: 12 * gib, deviceLocal: true), H(size: 32 * gib, deviceLocal: false), H(size: 246 * mib, deviceLocal: true)])

    /// NVIDIA with resizable BAR (an H100 80GB, driver 580): the host-visible device-local heap
    /// spans the whole VRAM — which is what made "host-visible, prefer device-local" read results
    /// over uncached PCIe.
    static let nvidiaH100 = MemoryTable(
        types: [T([], heap: 1), T(DL, heap: 0), T(DL, heap: 0), T([HV, HC], heap: 1), T([HV, HC, cached], heap: 1), T([DL, HV, HC], heap: 2)],
        heaps: [H(size: 80 * gib, deviceLocal: true), H(size: 128 * gib, deviceLocal: false), H(size: 80 * gib, deviceLocal: true)])

    /// AMD discrete GPU on RADV without Smart Access Memory (e.g. Radeon RX 6800), with the
    /// device-coherent/uncached types of VK_AMD_device_coherent_memory after the ordinary ones.
    static let amdNoSAM = MemoryTable(
        types: [T(DL, heap: 0), T([HV, HC], heap: 1), T([DL, HV, HC], heap: 2), T([HV, HC, cached], heap: 1),
                T(DL.union(amd), heap: 0), T(MemoryTypeFlags([HV, HC]).union(amd), heap: 1), T(MemoryTypeFlags([DL, HV, HC]).union(amd), heap: 2),
                T(MemoryTypeFlags([HV, HC, cached]).union(amd), heap: 1)],
        heaps: [H(size: 16 * gib - 256 * mib, deviceLocal: true), H(size: 16 * gib, deviceLocal: false), H(size: 256 * mib, deviceLocal: true)])

    /// The same AMD GPU with Smart Access Memory (resizable BAR): one device-local heap, all of it mappable.
    static let amdSAM = MemoryTable(
        types: [T(DL, heap: 0), T([HV, HC], heap: 1), T([DL, HV, HC], heap: 0), T([HV, HC, cached], heap: 1)],
        heaps: [H(size: 16 * gib, deviceLocal: true), H(size: 16 * gib, deviceLocal: false)])

    /// Intel integrated GPU on ANV (e.g. UHD Graphics 620): one heap, system RAM, device-local.
    static let intelIntegrated = MemoryTable(
        types: [T(DL, heap: 0), T([DL, HV, HC], heap: 0), T([DL, HV, HC, cached], heap: 0)],
        heaps: [H(size: 12 * gib, deviceLocal: true)])

    /// Mesa lavapipe (the CPU driver): one type, everything at once.
    static let lavapipe = MemoryTable(
        types: [T([DL, HV, HC, cached], heap: 0)],
        heaps: [H(size: 24 * gib, deviceLocal: true)])

    func choices(_ table: MemoryTable, _ kind: GPUDeviceKind) -> [GPUMemoryRole: Int] {
        let policy = MemoryPolicy(table: table, kind: kind)
        var result: [GPUMemoryRole: Int] = [:]
        for role in GPUMemoryRole.allCases { result[role] = policy.memoryType(for: role) }
        return result
    }

    @Test func nvidiaWithoutResizableBAR() {
        let policy = MemoryPolicy(table: Self.nvidiaNoBAR, kind: .discrete)
        #expect(!policy.unified && policy.needsStaging)
        let expected: Choices = [.device: 1, .upload: 2, .readback: 3, .constants: 4]
        #expect(choices(Self.nvidiaNoBAR, .discrete) == expected)
        #expect(!policy.isHostVisible(.device))
    }

    @Test func nvidiaWithResizableBARKeepsFramesOutOfTheBAR() {
        let policy = MemoryPolicy(table: Self.nvidiaH100, kind: .discrete)
        #expect(!policy.unified, "a discrete GPU is never unified, even when all VRAM is mappable")
        let chosen = choices(Self.nvidiaH100, .discrete)
        #expect(chosen[.device] == 1)
        #expect(chosen[.readback] == 4, "read-backs land in cached system memory, never in BAR memory")
        #expect(chosen[.upload] == 3)
        #expect(chosen[.constants] == 5)
    }

    @Test func amdDiscreteAvoidsDeviceCoherentTypes() {
        let chosen = choices(Self.amdNoSAM, .discrete)
        let expectedAMD: Choices = [.device: 0, .upload: 1, .constants: 2, .readback: 3]
        #expect(chosen == expectedAMD)
        let sam = choices(Self.amdSAM, .discrete)
        let expectedSAM: Choices = [.device: 0, .upload: 1, .constants: 2, .readback: 3]
        #expect(sam == expectedSAM)
        #expect(MemoryPolicy(table: Self.amdSAM, kind: .discrete).needsStaging)
    }

    @Test func integratedIsUnifiedAndMapsDeviceBuffers() {
        let policy = MemoryPolicy(table: Self.intelIntegrated, kind: .integrated)
        #expect(policy.unified && !policy.needsStaging)
        #expect(policy.isHostVisible(.device))
        #expect(policy.memoryType(for: .device) == 2, "results are read in place: cached beats uncached")
        #expect(policy.memoryType(for: .constants) != nil)
    }

    @Test func lavapipeIsUnifiedUnlessStagingIsForced() {
        let policy = MemoryPolicy(table: Self.lavapipe, kind: .cpu)
        #expect(policy.unified && !policy.needsStaging)
        let expected: Choices = [.device: 0, .upload: 0, .readback: 0, .constants: 0]
        #expect(choices(Self.lavapipe, .cpu) == expected)
        let forced = MemoryPolicy(table: Self.lavapipe, kind: .cpu, forceStaging: true)
        #expect(forced.needsStaging && !forced.isHostVisible(.device))
        #expect(forced.memoryType(for: .device) == 0, "the one type serves every role")
    }

    @Test func allowedBitsAreHonoured() {
        let policy = MemoryPolicy(table: Self.nvidiaNoBAR, kind: .discrete)
        // A buffer whose requirements exclude the VRAM type falls back to the BAR type.
        #expect(policy.memoryType(for: .device, allowed: 1 << 4) == 4)
        // No host-visible type allowed: constants cannot be placed.
        #expect(policy.memoryType(for: .constants, allowed: 1 << 1) == nil)
        #expect(policy.memoryType(for: .readback, allowed: 1 << 2) == 2, "uncached, but host-visible, when nothing better is allowed")
    }

    @Test func everyRoleIsServedOnEveryRecordedDevice() {
        let devices: [(String, MemoryTable, GPUDeviceKind)] = [
            ("nvidia", Self.nvidiaNoBAR, .discrete), ("h100", Self.nvidiaH100, .discrete), ("amd", Self.amdNoSAM, .discrete),
            ("amd-sam", Self.amdSAM, .discrete), ("intel", Self.intelIntegrated, .integrated), ("lavapipe", Self.lavapipe, .cpu),
        ]
        for (name, table, kind) in devices {
            let policy = MemoryPolicy(table: table, kind: kind)
            for role in GPUMemoryRole.allCases {
                let type = policy.memoryType(for: role)
                #expect(type != nil, "\(name): no type for \(role)")
                guard let type else { continue }
                let flags = table.types[type].flags
                #expect(!flags.contains(.deviceCoherentAMD), "\(name) \(role)")
                if policy.isHostVisible(role) { #expect(flags.contains(.hostVisible), "\(name) \(role) must be mappable") }
                if role == .device { #expect(flags.contains(.deviceLocal), "\(name): device buffers in device-local memory") }
            }
            #expect(policy.summary.contains("device: type"), "\(name)")
        }
    }

    /// The live device (lavapipe here): its table as the driver reports it, and the policy's view of it.
    @Test func liveDevice() throws {
        let context = try GPUContextTests.context()
        let policy = context.memoryPolicy
        #expect(!policy.table.types.isEmpty && !policy.table.heaps.isEmpty)
        for role in GPUMemoryRole.allCases { #expect(policy.memoryType(for: role) != nil, "\(role)") }
        if context.deviceKind == .cpu { #expect(policy.unified || ProcessInfo.processInfo.environment["GRANITE_GPU_STAGING"] == "1") }
        if context.deviceKind == .discrete { #expect(policy.needsStaging) }
    }

    /// Staging forced on the live device: a device buffer is not mapped, an upload and a read-back
    /// through staging buffers and copy commands give the bytes back unchanged.
    @Test func stagedRoundTrip() throws {
        _ = try GPUContextTests.context()
        let context = try GPUContext(forceStaging: true)
        #expect(context.memoryPolicy.needsStaging)
        let pool = BufferPool(context: context)
        let size = 4099 * 4
        let up = try pool.takeStaged(size: size, .upload)
        let down = try StagedBuffer(device: try pool.take(size: size, role: .device), staging: try pool.takeStaging(size: size, .readback),
                                    direction: .readback)
        #expect(up.copies && down.copies && !up.device.isHostVisible)
        #expect(throws: GPUError.self) { try up.device.write([1, 2, 3]) }
        let values = (0..<4099).map { UInt32(truncatingIfNeeded: $0 &* 2_654_435_761) }
        try up.host.write(values: values)
        let sequence = try CommandSequence(context: context)
        try sequence.record { (recorder) throws(GPUError) in
            try up.recordCopy(&recorder)
            try recorder.copy(from: up.device, to: down.device, size: size)
            try down.recordCopy(&recorder)
        }
        try sequence.run()
        #expect(try down.host.read(UInt32.self, count: 4099) == values)
        // uploadNow: a second write outside a frame's submission.
        let again = values.map { $0 ^ 0xffff_ffff }
        try up.uploadNow(again)
        try sequence.run()
        #expect(try down.host.read(UInt32.self, count: 4099) == again)
        #expect(context.memoryUse.current[.device, default: 0] >= 2 * size)
    }
}
