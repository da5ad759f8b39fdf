import GraniteMedia

extension StreamFormat {
    /// Packs a driver buffer (rows `bytesPerLine` apart) into a tightly packed `Image`; MJPEG
    /// frames go through `decoder`.
    func image(from payload: [UInt8], device: String, decoder: (any ImageDecoder)?) throws(CaptureError) -> Image {
        let width = size.width, height = size.height
        guard let pixelFormat = format.pixelFormat else {
            guard let decoder else { throw .invalidRequest("\(device): MJPEG frames need a JPEG decoder") }
            return try decoder.decode(payload, path: "\(device) (MJPEG frame)")
        }
        guard width > 0, height > 0 else {
            throw .decodeFailed(path: device, reason: "the driver reported an empty frame size \(size)")
        }
        let row = pixelFormat.minimumBytesPerRow(width: width)
        let stride = max(bytesPerLine, row)
        // The driver's numbers are untrusted: a stride × height past what an Int holds is no frame.
        let (lumaBytes, overflow) = stride.multipliedReportingOverflow(by: height)
        guard !overflow, lumaBytes <= Int.max / 4 else {
            throw .decodeFailed(path: device, reason: "frame geometry \(size) with \(stride) bytes per line is too large")
        }
        // Rows of each plane: NV12 has a half-height interleaved chroma plane after the luma.
        let planes: [(offset: Int, rows: Int, row: Int)] = pixelFormat == .nv12
            ? [(0, height, width), (lumaBytes, (height + 1) / 2, ((width + 1) / 2) * 2)]
            : [(0, height, row)]
        // Each plane ends within offset + stride × rows ≤ 2 × lumaBytes, which the bound above keeps in range.
        let needed = planes.map { $0.offset + stride * ($0.rows - 1) + $0.row }.max() ?? 0
        guard payload.count >= needed else {
            throw .decodeFailed(path: device, reason: "short frame: \(payload.count) of \(needed) bytes")
        }
        if stride == row && pixelFormat != .nv12 {
            return try wrap(Array(payload[0..<(row * height)]), pixelFormat, device: device)
        }
        var packed = [UInt8]()
        packed.reserveCapacity(pixelFormat.byteCount(width: width, height: height))
        for plane in planes {
            for y in 0..<plane.rows {
                let start = plane.offset + y * stride
                packed.append(contentsOf: payload[start..<(start + plane.row)])
            }
        }
        return try wrap(packed, pixelFormat, device: device)
    }

    private func wrap(_ bytes: [UInt8], _ pixelFormat: PixelFormat, device: String) throws(CaptureError) -> Image {
        do {
            return try Image(width: size.width, height: size.height, format: pixelFormat, bytes: bytes)
        } catch {
            throw .decodeFailed(path: device, reason: error.description)
        }
    }
}
