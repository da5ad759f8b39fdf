import CFFmpeg

/// FFmpeg's libraries (libavformat, libavcodec, libavutil, libswresample), opened when a recording
/// starts rather than when the program does (Sources/CFFmpeg/loader.c): granite-cam, granite and
/// the bundles run without FFmpeg and its codec libraries, and only recording needs them.
public enum FFmpegLibraries {
    /// Opens them, once per process (later calls answer at once); every entry to the recorder
    /// (``EncoderChoice/resolve(_:container:machine:)``, so ``Recorder`` and a record sink) calls
    /// it before any FFmpeg function. Throws ``RecorderError/ffmpegMissing(library:package:reason:)``
    /// naming the library that did not load and the package to install.
    public static func load() throws(RecorderError) {
        guard cff_load() == 0 else { return }
        let failure = cff_load_failure()
        throw .ffmpegMissing(library: String(cString: failure.soname), package: String(cString: failure.package),
                             reason: String(cString: failure.reason))
    }

    /// The environment variable that makes ``load()`` fail as on a machine without the library it
    /// names (`libavcodec.so.59`): fault injection, for the tests of that error.
    public static let faultInjectionMissing = CFF_FAULT_INJECTION_MISSING
}
