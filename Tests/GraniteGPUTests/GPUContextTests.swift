import Foundation
import Testing
@testable import GraniteGPU
import GraniteTesting

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
    static func context() throws -> GPUContext {
        do { return try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device: \(error)") }
    }

    @Test func opensADevice() throws {
        let context = try Self.context()
        #expect(!context.deviceName.isEmpty)
        #expect(try GPUContext.availableDevices().contains { $0.name == context.deviceName })
        #expect(try GPUContext.shared() === context)
    }

    @Test func unknownRequestedDeviceIsATypedError() throws {
        _ = try Self.context()
        #expect {
            try GPUContext(requested: "no-such-gpu-xyz")
        } throws: { error in
            guard case let GPUError.deviceNotFound(requested, available) = error else { return false }
            return requested == "no-such-gpu-xyz" && !available.isEmpty
        }
    }

    @Test func buffersRoundTripAndCheckBounds() throws {
        let context = try Self.context()
        let buffer = try GPUBuffer(context: context, size: 10)
        #expect(buffer.size == 12)
        try buffer.write([1, 2, 3], at: 4)
        #expect(try buffer.read(count: 3, at: 4) == [1, 2, 3])
        #expect(throws: GPUError.outOfBounds(what: "GPUBuffer.write", offset: 10, count: 3, size: 12)) {
            try buffer.write([1, 2, 3], at: 10)
        }
        do {
            _ = try buffer.read(count: 4, at: 10)
            Issue.record("a read past the end must throw")
        } catch {
            let typed: GPUError = error   // the public API throws GPUError itself: no cast
            #expect(typed == .outOfBounds(what: "GPUBuffer.read", offset: 10, count: 4, size: 12))
        }
        let pool = BufferPool(context: context)
        let taken = try pool.take(size: 100)
        pool.give(taken)
        #expect(pool.idleCount == 1)
        #expect(try pool.take(size: 99) === taken)
    }

    @Test func fillAndCopyRecordedOnceSubmittedMany() throws {
        let context = try Self.context()
        let a = try GPUBuffer(context: context, size: 64), b = try GPUBuffer(context: context, size: 64)
        let sequence = try CommandSequence(context: context)
        try sequence.record { (recorder) throws(GPUError) in
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

    /// Storage images: buffer → image → buffer copies in the general layout, recorded once and
    /// submitted twice; bounds are checked; the pool hands an image back by its size.
    @Test func imagesRoundTripThroughCopies() throws {
        let context = try Self.context()
        let image = try GPUImage(context: context, width: 5, height: 3)
        #expect(image.byteCount == 60)
        let source = try GPUBuffer(context: context, size: 60), target = try GPUBuffer(context: context, size: 72)
        let sequence = try CommandSequence(context: context)
        try sequence.record { (recorder) throws(GPUError) in
            try recorder.copy(from: source, to: image)
            recorder.barrier()
            try recorder.copy(from: image, to: target, offset: 12)
        }
        for round in 0..<2 {
            let texels = (0..<15).map { UInt32($0 * 0x0101_0101 + round) }
            try source.write(values: texels)
            try sequence.run()
            #expect(try target.read(UInt32.self, count: 15, at: 12) == texels, "round \(round)")
        }
        let small = try GPUBuffer(context: context, size: 56)
        let failing = try CommandSequence(context: context)
        #expect(throws: GPUError.outOfBounds(what: "copy to image", offset: 0, count: 60, size: 56)) {
            try failing.record { (recorder) throws(GPUError) in try recorder.copy(from: small, to: image) }
        }
        #expect(throws: GPUError.outOfBounds(what: "copy from image", offset: 16, count: 60, size: 72)) {
            try failing.record { (recorder) throws(GPUError) in try recorder.copy(from: image, to: target, offset: 16) }
        }
        #expect(throws: GPUError.self) { try GPUImage(context: context, width: 0, height: 4) }
        let pool = BufferPool(context: context)
        let taken = try pool.takeImage(width: 8, height: 2)
        pool.give(taken)
        #expect(pool.idleCount == 1)
        #expect(try pool.takeImage(width: 8, height: 2) === taken)
        #expect(try pool.takeImage(width: 2, height: 8) !== taken)
    }

    /// A timed sequence labels a timestamp after every command, per section; an untimed one says nothing.
    @Test func timedSequencesTimeEveryCommand() throws {
        let context = try Self.context()
        let a = try GPUBuffer(context: context, size: 1 << 20), b = try GPUBuffer(context: context, size: 1 << 20)
        let timed = try CommandSequence(context: context, timed: true)
        try timed.record { (recorder) throws(GPUError) in
            recorder.section = "clear"
            recorder.fill(BufferSlice(a), value: 7)
            recorder.barrier()
            recorder.section = nil
            try recorder.copy(from: a, to: b, size: 1 << 20)
        }
        try timed.run()
        #expect(try b.read(UInt32.self, count: 1, at: (1 << 20) - 4) == [7])
        let timings = try timed.timings()
        #expect(timings.map(\.label) == (timed.isTimed ? ["clear: fill", "copy buffer→buffer"] : []))
        #expect(timings.allSatisfy { $0.seconds >= 0 && $0.seconds < 10 })
        let plain = try CommandSequence(context: context)
        try plain.record { (recorder) throws(GPUError) in recorder.fill(BufferSlice(a), value: 1) }
        try plain.run()
        #expect(try plain.timings().isEmpty)
        #expect(!plain.isTimed)
    }

    @Test func rejectsNonSPIRV() throws {
        let context = try Self.context()
        #expect(throws: GPUError.invalidPipeline(name: "junk", reason: "not SPIR-V (bad magic number)")) {
            try context.pipeline(named: "junk", spirv: [1, 2, 3, 4, 5, 6], bindings: 1)
        }
    }
}
