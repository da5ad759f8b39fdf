import Foundation
import Testing
@testable import GraniteGPU

struct DeviceChoiceTests {
    let devices = [
        DeviceCandidate(name: "llvmpipe (LLVM 15.0.6, 256 bits)", kind: .cpu, hasComputeQueue: true),
        DeviceCandidate(name: "Intel(R) UHD Graphics 620", kind: .integrated, hasComputeQueue: true),
        DeviceCandidate(name: "NVIDIA GeForce RTX 3060", kind: .discrete, hasComputeQueue: true),
    ]

    @Test func prefersDiscreteThenIntegratedThenCPU() throws {
        #expect(try DeviceChoice.pick(devices, requested: nil) == 2)
        #expect(try DeviceChoice.pick(Array(devices.prefix(2)), requested: nil) == 1)
        #expect(try DeviceChoice.pick([devices[0]], requested: nil) == 0)
    }

    @Test func nameSubstringOverrides() throws {
        #expect(try DeviceChoice.pick(devices, requested: "LLVMPIPE") == 0)
        #expect(try DeviceChoice.pick(devices, requested: "uhd") == 1)
    }

    @Test func errorsNameTheFix() {
        #expect(throws: GPUError.deviceNotFound(requested: "radeon", available: devices.map(\.name))) {
            try DeviceChoice.pick(devices, requested: "radeon")
        }
        #expect(throws: GPUError.self) { try DeviceChoice.pick([], requested: nil) }
        let noQueue = [DeviceCandidate(name: "odd", kind: .discrete, hasComputeQueue: false)]
        #expect(throws: GPUError.self) { try DeviceChoice.pick(noQueue, requested: nil) }
        #expect("\(GPUError.noDevice(detail: "x"))".contains("mesa-vulkan-drivers"))
        #expect("\(GPUError.noDriver(detail: "x"))".contains("libvulkan1"))
        #expect("\(GPUError.vulkan(call: "vkCreateBuffer", result: -2))" == "vkCreateBuffer failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)")
    }
}

/// The real device: lavapipe in CI.
struct GPUContextTests {
    static func context() -> GPUContext? {
        do { return try GPUContext.shared() } catch {
            if ProcessInfo.processInfo.environment["CI"] == "true" { Issue.record("CI=true but no Vulkan device: \(error)") }
            else { print("skipping: \(error)") }
            return nil
        }
    }

    @Test func opensADevice() throws {
        guard let context = Self.context() else { return }
        #expect(!context.deviceName.isEmpty)
        #expect(try GPUContext.availableDevices().contains { $0.name == context.deviceName })
        #expect(try GPUContext.shared() === context)
    }

    @Test func unknownRequestedDeviceIsATypedError() {
        guard Self.context() != nil else { return }
        #expect {
            try GPUContext(requested: "no-such-gpu-xyz")
        } throws: { error in
            guard case let GPUError.deviceNotFound(requested, available) = error else { return false }
            return requested == "no-such-gpu-xyz" && !available.isEmpty
        }
    }

    @Test func buffersRoundTripAndCheckBounds() throws {
        guard let context = Self.context() else { return }
        let buffer = try GPUBuffer(context: context, size: 10)
        #expect(buffer.size == 12)
        try buffer.write([1, 2, 3], at: 4)
        #expect(try buffer.read(count: 3, at: 4) == [1, 2, 3])
        #expect(throws: GPUError.outOfBounds(what: "GPUBuffer.write", offset: 10, count: 3, size: 12)) {
            try buffer.write([1, 2, 3], at: 10)
        }
        let pool = BufferPool(context: context)
        let taken = try pool.take(size: 100)
        pool.give(taken)
        #expect(pool.idleCount == 1)
        #expect(try pool.take(size: 99) === taken)
    }

    @Test func fillAndCopyRecordedOnceSubmittedMany() throws {
        guard let context = Self.context() else { return }
        let a = try GPUBuffer(context: context, size: 64), b = try GPUBuffer(context: context, size: 64)
        let sequence = try CommandSequence(context: context)
        try sequence.record { recorder in
            recorder.fill(BufferSlice(a, offset: 0, size: 32), value: 0x0102_0304)
            recorder.barrier()
            try recorder.copy(from: a, to: b, size: 64)
        }
        try a.write([UInt8](repeating: 9, count: 64))
        try sequence.run()
        #expect(try b.read(UInt32.self, count: 8) == [UInt32](repeating: 0x0102_0304, count: 8))
        #expect(try b.read(count: 32, at: 32) == [UInt8](repeating: 9, count: 32))
        try a.write([UInt8](repeating: 7, count: 64))
        try sequence.run()
        #expect(try b.read(count: 32, at: 32) == [UInt8](repeating: 7, count: 32), "second submission reruns the copy")
    }

    @Test func rejectsNonSPIRV() {
        guard let context = Self.context() else { return }
        #expect(throws: GPUError.invalidPipeline(name: "junk", reason: "not SPIR-V (bad magic number)")) {
            try context.pipeline(named: "junk", spirv: [1, 2, 3, 4, 5, 6], bindings: 1)
        }
    }
}
