#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import GraniteMedia

/// The one EINTR-retrying wrapper: a call interrupted twice (fault injection: the body sets
/// errno = EINTR itself) is retried, another errno becomes the caller's typed error.
@Suite struct SystemCallTests {
    struct Failure: Error, Equatable { let code: Int32 }

    @Test func retriesEINTRAndMapsOtherErrors() throws {
        var calls = 0
        let n = try SystemCall.retryingEINTR({ () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 42
        }, failure: { Failure(code: $0) })
        #expect(n == 42 && calls == 3)
        #expect(throws: Failure(code: ENOENT)) {
            try SystemCall.retryingEINTR({ open("/nonexistent/granite-\(calls)", O_RDONLY) }, failure: { Failure(code: $0) })
        }
    }
}
