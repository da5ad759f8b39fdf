import Foundation
import NIOCore

/// A batch's whole DAG as one CARv1 stream, built from the files while the node reads it.
///
/// ```
/// producer thread: UnixFSImporter(paths) ─put(cid, block)─► frames (varint | cid | block) ─► BlockPipe
///                                                                     (at most `capacity` buffers ahead)
/// HTTP client ◄── next(): header(root) first, then the pipe's buffers ◄──────────────────────┘
/// ```
/// The root is known from queue time, so the header goes first and nothing waits for the end:
/// memory stays at a few buffers however large the batch. The root the files give now is
/// compared with it at the end; a difference fails the stream with ``IPFSError/rootChanged(expected:now:)``.
/// Each iteration builds afresh (a retried request re-reads the files).
struct CARStream: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let paths: [String]
    let options: ImportOptions
    let root: CID
    /// Called on the producer thread with the file bytes read so far.
    let progress: (@Sendable (UInt64) -> Void)?

    func makeAsyncIterator() -> Iterator { Iterator(stream: self) }

    struct Iterator: AsyncIteratorProtocol {
        private let stream: CARStream
        private let holder = Holder()

        /// Owns the pipe for the iterator: released (the request ended, however), it stops the producer.
        private final class Holder: @unchecked Sendable {
            var pipe: BlockPipe?
            deinit { pipe?.abandon() }
        }

        init(stream: CARStream) { self.stream = stream }

        mutating func next() async throws -> ByteBuffer? {
            if let pipe = holder.pipe { return try await pipe.next() }
            let pipe = BlockPipe()
            holder.pipe = pipe
            let stream = self.stream
            let thread = Thread {
                let result = Result { () throws(IPFSError) in
                    let importer = try UnixFSImporter(options: stream.options)
                    let now = try importer.importPaths(stream.paths, sink: pipe, progress: stream.progress).roots
                    try pipe.flush()
                    guard now.count == 1, now[0].cid == stream.root else {
                        throw IPFSError.rootChanged(expected: stream.root.description, now: now.map(\.cid.description).joined(separator: ","))
                    }
                }
                pipe.finish(result)
            }
            thread.name = "granite-car"
            thread.start()
            let header = CARWriter.header(roots: [stream.root])
            return ByteBuffer(bytes: Varint.encode(UInt64(header.count)) + header)
        }
    }
}

/// Blocks from the importer's thread to the HTTP client's reads, a bounded number of buffers ahead.
///
/// The producer blocks (a plain thread, never a task) while `capacity` buffers wait; the consumer
/// awaits a continuation. Released by its iterator (the request ended or failed), it stops the producer.
final class BlockPipe: BlockSink, @unchecked Sendable {
    private let condition = NSCondition()
    private var ready: [ByteBuffer] = []
    private var current = ByteBuffer()
    private var outcome: Result<Void, IPFSError>?
    private var waiter: CheckedContinuation<ByteBuffer?, any Error>?
    private var abandoned = false
    /// Buffers of about `bufferSize` bytes held at most (2 MiB in all).
    private let capacity = 8
    private let bufferSize = 256 << 10

    /// A CAR section for `block`, into the current buffer; a full buffer is handed on.
    func put(cid: CID, block: UnsafeRawBufferPointer) throws(IPFSError) {
        let cidBytes = cid.bytes
        current.writeBytes(Varint.encode(UInt64(cidBytes.count + block.count)))
        current.writeBytes(cidBytes)
        current.writeBytes(block)
        if current.readableBytes >= bufferSize { try flush() }
    }

    /// Hands the current buffer on, waiting while `capacity` are already waiting.
    func flush() throws(IPFSError) {
        guard current.readableBytes > 0 else { return }
        let buffer = current
        current = ByteBuffer()
        condition.lock()
        while ready.count >= capacity && !abandoned { condition.wait() }
        if abandoned {
            condition.unlock()
            throw IPFSError.carWrite(path: "(upload)", reason: "the request ended before the CAR stream")
        }
        if let waiter {
            self.waiter = nil
            condition.unlock()
            waiter.resume(returning: buffer)
            return
        }
        ready.append(buffer)
        condition.unlock()
    }

    /// The producer is done (`result`): the reader gets the end of the stream, or the error.
    func finish(_ result: Result<Void, IPFSError>) {
        condition.lock()
        outcome = result
        let waiter = self.waiter
        self.waiter = nil
        condition.unlock()
        guard let waiter else { return }
        switch result {
        case .success: waiter.resume(returning: nil)
        case let .failure(error): waiter.resume(throwing: error)
        }
    }

    /// The next buffer; nil at the end of the stream.
    func next() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ByteBuffer?, any Error>) in
                condition.lock()
                if !ready.isEmpty {
                    let buffer = ready.removeFirst()
                    condition.signal()
                    condition.unlock()
                    continuation.resume(returning: buffer)
                } else if let outcome {
                    condition.unlock()
                    switch outcome {
                    case .success: continuation.resume(returning: nil)
                    case let .failure(error): continuation.resume(throwing: error)
                    }
                } else {
                    waiter = continuation
                    condition.unlock()
                }
            }
        } onCancel: {
            self.abandon()
        }
    }

    /// Stops the producer at its next buffer (the request is over).
    func abandon() {
        condition.lock()
        abandoned = true
        let waiter = self.waiter
        self.waiter = nil
        condition.broadcast()
        condition.unlock()
        waiter?.resume(throwing: CancellationError())
    }
}
