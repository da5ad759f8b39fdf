/// RGBA8 → planar Y, Cb, Cr, or packed YUYV (BT.601 limited range: ``ColorConversion/luma(_:_:_:)``,
/// ``ColorConversion/cb(_:_:_:)``, ``ColorConversion/cr(_:_:_:)``), for the outputs that need
/// YUV (the Y4M pipe, a V4L2 output's YU12). 4:2:0 chroma is the mean of each 2×2 block (odd
/// edges repeat the last column/row); 4:4:4 one sample per pixel.
///
/// Vectorised with Swift's SIMD types: 16 pixels of a row at a time for luma and 4:4:4 chroma,
/// 8 chroma samples (16×2 pixels) at a time for 4:2:0, in the same integer arithmetic as the
/// scalar formulas, so the result is bit-identical to ``planarYUVReference`` (what the tests
/// compare on odd sizes); the row ends that do not fill a vector take the scalar formulas.
extension ColorConversion {
    /// Writes `rgba` (`rgba8`, packed rows) as planes: Y (`lumaStride` bytes a row) then Cb and Cr
    /// (`chromaStride` bytes a row; 4:2:0 when `subsampled`), starting at `out`, which must hold
    /// `lumaStride * height + 2 * chromaStride * chromaHeight` bytes. Padding bytes are left alone.
    package static func planarYUV(_ rgba: Image, subsampled: Bool, into out: UnsafeMutablePointer<UInt8>,
                                  lumaStride: Int, chromaStride: Int) {
        precondition(rgba.format == .rgba8)
        let w = rgba.width, h = rgba.height
        let ch = subsampled ? (h + 1) / 2 : h
        rgba.bytes.withUnsafeBytes { raw in
            let src = raw.baseAddress!
            let u = out + lumaStride * h, v = u + chromaStride * ch
            for y in 0..<h { lumaRow(src + y * w * 4, width: w, into: out + y * lumaStride) }
            if subsampled {
                for cy in 0..<ch {
                    let y0 = cy * 2, y1 = min(y0 + 1, h - 1)
                    chroma420Row(src + y0 * w * 4, src + y1 * w * 4, width: w,
                                 cb: u + cy * chromaStride, cr: v + cy * chromaStride)
                }
            } else {
                for y in 0..<h { chroma444Row(src + y * w * 4, width: w, cb: u + y * chromaStride, cr: v + y * chromaStride) }
            }
        }
    }

    /// The scalar formulas pixel by pixel: the reference ``planarYUV(_:subsampled:into:lumaStride:chromaStride:)`` must equal.
    package static func planarYUVReference(_ rgba: Image, subsampled: Bool, into out: UnsafeMutablePointer<UInt8>,
                                           lumaStride: Int, chromaStride: Int) {
        precondition(rgba.format == .rgba8)
        let w = rgba.width, h = rgba.height
        let cw = subsampled ? (w + 1) / 2 : w, ch = subsampled ? (h + 1) / 2 : h
        let s = rgba.bytes
        let u = out + lumaStride * h, v = u + chromaStride * ch
        for y in 0..<h {
            for x in 0..<w {
                let p = (y * w + x) * 4
                out[y * lumaStride + x] = luma(Int(s[p]), Int(s[p + 1]), Int(s[p + 2]))
            }
        }
        for cy in 0..<ch {
            for cx in 0..<cw {
                var r = 0, g = 0, b = 0
                if subsampled {
                    let y0 = cy * 2, y1 = min(y0 + 1, h - 1), x0 = cx * 2, x1 = min(x0 + 1, w - 1)
                    for p in [y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1] {
                        r += Int(s[p * 4]); g += Int(s[p * 4 + 1]); b += Int(s[p * 4 + 2])
                    }
                } else {
                    let p = (cy * w + cx) * 4
                    r = Int(s[p]) * 4; g = Int(s[p + 1]) * 4; b = Int(s[p + 2]) * 4
                }
                u[cy * chromaStride + cx] = cb(r, g, b)
                v[cy * chromaStride + cx] = cr(r, g, b)
            }
        }
    }

    /// Writes `rgba` as NV12: Y rows `lumaStride` apart, then interleaved Cb, Cr rows
    /// `chromaStride` apart (4:2:0, the chroma of ``planarYUV(_:subsampled:into:lumaStride:chromaStride:)``);
    /// padding bytes are left alone. `vectorised` false: the scalar formulas (bit-identical).
    package static func semiPlanarYUV(_ rgba: Image, into out: UnsafeMutablePointer<UInt8>, lumaStride: Int, chromaStride: Int,
                                      vectorised: Bool) {
        precondition(rgba.format == .rgba8)
        let w = rgba.width, h = rgba.height, cw = (w + 1) / 2, ch = (h + 1) / 2
        let uv = out + lumaStride * h
        guard vectorised else {
            // The planar reference into one row pair of chroma at a time would re-derive it; the
            // whole planes once, then interleaved, keeps one set of formulas.
            let planes = UnsafeMutablePointer<UInt8>.allocate(capacity: w * h + 2 * cw * ch)
            defer { planes.deallocate() }
            planarYUVReference(rgba, subsampled: true, into: planes, lumaStride: w, chromaStride: cw)
            for y in 0..<h { (out + y * lumaStride).update(from: planes + y * w, count: w) }
            interleave(cb: planes + w * h, cr: planes + w * h + cw * ch, stride: cw, width: cw, rows: ch, into: uv, chromaStride: chromaStride)
            return
        }
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: 2 * cw)
        defer { row.deallocate() }
        rgba.bytes.withUnsafeBytes { raw in
            let src = raw.baseAddress!
            for y in 0..<h { lumaRow(src + y * w * 4, width: w, into: out + y * lumaStride) }
            for cy in 0..<ch {
                let y0 = cy * 2, y1 = min(y0 + 1, h - 1)
                chroma420Row(src + y0 * w * 4, src + y1 * w * 4, width: w, cb: row, cr: row + cw)
                interleave(cb: row, cr: row + cw, stride: 0, width: cw, rows: 1, into: uv + cy * chromaStride, chromaStride: 0)
            }
        }
    }

    /// Cb and Cr planes (`rows` rows of `width`, `stride` apart) as interleaved pairs, rows `chromaStride` apart.
    private static func interleave(cb: UnsafePointer<UInt8>, cr: UnsafePointer<UInt8>, stride: Int, width: Int, rows: Int,
                                   into out: UnsafeMutablePointer<UInt8>, chromaStride: Int) {
        for r in 0..<rows {
            let u = cb + r * stride, v = cr + r * stride, d = out + r * chromaStride
            for x in 0..<width {
                d[2 * x] = u[x]
                d[2 * x + 1] = v[x]
            }
        }
    }

    /// Writes `rgba` as packed YUYV (4:2:2: each pair's chroma the mean of the two pixels; an odd
    /// last column pairs with itself), rows `stride` bytes apart; padding bytes are left alone.
    package static func packedYUYV(_ rgba: Image, into out: UnsafeMutablePointer<UInt8>, stride: Int) {
        precondition(rgba.format == .rgba8)
        let w = rgba.width
        rgba.bytes.withUnsafeBytes { raw in
            for y in 0..<rgba.height { yuyvRow(raw.baseAddress! + y * w * 4, width: w, into: out + y * stride) }
        }
    }

    /// The scalar formulas pair by pair: the reference ``packedYUYV(_:into:stride:)`` must equal.
    package static func packedYUYVReference(_ rgba: Image, into out: UnsafeMutablePointer<UInt8>, stride: Int) {
        precondition(rgba.format == .rgba8)
        let w = rgba.width, s = rgba.bytes
        for y in 0..<rgba.height {
            for pair in 0..<((w + 1) / 2) {
                let a = (y * w + pair * 2) * 4, b = (y * w + min(pair * 2 + 1, w - 1)) * 4
                let r0 = Int(s[a]), g0 = Int(s[a + 1]), b0 = Int(s[a + 2])
                let r1 = Int(s[b]), g1 = Int(s[b + 1]), b1 = Int(s[b + 2])
                let d = y * stride + pair * 4
                out[d] = luma(r0, g0, b0)
                out[d + 1] = cb((r0 + r1) * 2, (g0 + g1) * 2, (b0 + b1) * 2)
                out[d + 2] = luma(r1, g1, b1)
                out[d + 3] = cr((r0 + r1) * 2, (g0 + g1) * 2, (b0 + b1) * 2)
            }
        }
    }

    // MARK: Rows

    private typealias Lanes16 = SIMD16<Int32>
    private typealias Lanes8 = SIMD8<Int32>

    /// Red, green and blue of 16 RGBA pixels as 32-bit lanes.
    @inline(__always)
    private static func channels16(_ p: UnsafeRawPointer) -> (Lanes16, Lanes16, Lanes16) {
        let px = Lanes16(truncatingIfNeeded: p.loadUnaligned(as: SIMD16<UInt32>.self))
        let mask = Lanes16(repeating: 0xFF)
        return (px & mask, (px &>> 8) & mask, (px &>> 16) & mask)
    }

    @inline(__always)
    private static func store(_ lanes: Lanes16, _ to: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(to).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: lanes), as: SIMD16<UInt8>.self)
    }

    @inline(__always)
    private static func store(_ lanes: Lanes8, _ to: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(to).storeBytes(of: SIMD8<UInt8>(truncatingIfNeeded: lanes), as: SIMD8<UInt8>.self)
    }

    /// `(66r + 129g + 25b + 128) >> 8 + 16` of 16 RGBA pixels: never outside 16...235, so no
    /// clamp; the sum is at most 220 · 255 + 128 = 56228, so 16-bit lanes hold it (twice as many
    /// lanes a register as 32-bit ones, and SSE2 multiplies 16-bit lanes in one instruction).
    @inline(__always)
    private static func luma16(_ px: SIMD16<UInt32>) -> SIMD16<UInt16> {
        let mask = SIMD16<UInt32>(repeating: 0xFF)
        let r = SIMD16<UInt16>(truncatingIfNeeded: px & mask)
        let g = SIMD16<UInt16>(truncatingIfNeeded: (px &>> 8) & mask)
        let b = SIMD16<UInt16>(truncatingIfNeeded: (px &>> 16) & mask)
        return ((66 &* r &+ 129 &* g &+ 25 &* b &+ 128) &>> 8) &+ 16
    }

    private static func lumaRow(_ src: UnsafeRawPointer, width w: Int, into y: UnsafeMutablePointer<UInt8>) {
        var x = 0
        while x + 16 <= w {
            let lanes = luma16(src.advanced(by: x * 4).loadUnaligned(as: SIMD16<UInt32>.self))
            UnsafeMutableRawPointer(y + x).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: lanes), as: SIMD16<UInt8>.self)
            x += 16
        }
        let p = src.assumingMemoryBound(to: UInt8.self)
        while x < w {
            y[x] = luma(Int(p[x * 4]), Int(p[x * 4 + 1]), Int(p[x * 4 + 2]))
            x += 1
        }
    }

    /// One row of YUYV: 16 pixels (8 pairs) at a time, then the scalar formulas for the rest.
    private static func yuyvRow(_ src: UnsafeRawPointer, width w: Int, into d: UnsafeMutablePointer<UInt8>) {
        var x = 0
        while x + 16 <= w {
            let px = src.advanced(by: x * 4).loadUnaligned(as: SIMD16<UInt32>.self)
            let y = luma16(px)
            // Red and blue (green and alpha) of a pixel in one word's halves: a pair's sums fit too.
            let rb = px & pairMask, ga = (px &>> 8) & pairMask
            let rbSum = rb.evenHalf &+ rb.oddHalf, gSum = ga.evenHalf &+ ga.oddHalf
            let (u, v) = chroma(Lanes8(truncatingIfNeeded: (rbSum & 0x1FF) &<< 1), Lanes8(truncatingIfNeeded: (gSum & 0x1FF) &<< 1),
                                Lanes8(truncatingIfNeeded: (rbSum &>> 16) & 0x1FF) &<< 1)
            // U and V interleaved as 16-bit lanes (U | V << 16 per pair, little-endian), each under
            // its pixel's Y: Y0, U, Y1, V.
            let uv = unsafeBitCast(SIMD8<UInt32>(truncatingIfNeeded: u | (v &<< 16)), to: SIMD16<UInt16>.self)
            UnsafeMutableRawPointer(d + x * 2).storeBytes(of: y | (uv &<< 8), as: SIMD16<UInt16>.self)
            x += 16
        }
        let p = src.assumingMemoryBound(to: UInt8.self)
        while x < w {
            let a = x * 4, b = min(x + 1, w - 1) * 4
            let r0 = Int(p[a]), g0 = Int(p[a + 1]), b0 = Int(p[a + 2])
            let r1 = Int(p[b]), g1 = Int(p[b + 1]), b1 = Int(p[b + 2])
            d[x * 2] = luma(r0, g0, b0)
            d[x * 2 + 1] = cb((r0 + r1) * 2, (g0 + g1) * 2, (b0 + b1) * 2)
            d[x * 2 + 2] = luma(r1, g1, b1)
            d[x * 2 + 3] = cr((r0 + r1) * 2, (g0 + g1) * 2, (b0 + b1) * 2)
            x += 2
        }
    }

    private static let pairMask = SIMD16<UInt32>(repeating: 0x00FF_00FF)

    /// Cb and Cr from sums of four samples (as ``cb(_:_:_:)`` / ``cr(_:_:_:)``). Their clamp never
    /// acts for sums of real samples (0...1020 each): the extremes, −112 · 1020 and 112 · 1020,
    /// give 16 and 240, so the vector form leaves it out (SSE2 has no 32-bit min/max).
    @inline(__always)
    private static func chroma<L: SIMD>(_ r: L, _ g: L, _ b: L) -> (L, L) where L.Scalar == Int32 {
        let u = ((-38 &* r &- 74 &* g &+ 112 &* b &+ 512) &>> 10) &+ 128
        let v = ((112 &* r &- 94 &* g &- 18 &* b &+ 512) &>> 10) &+ 128
        return (u, v)
    }

    private static func chroma444Row(_ src: UnsafeRawPointer, width w: Int, cb u: UnsafeMutablePointer<UInt8>, cr v: UnsafeMutablePointer<UInt8>) {
        var x = 0
        while x + 16 <= w {
            let (r, g, b) = channels16(src + x * 4)
            let (cbs, crs) = chroma(r &<< 2, g &<< 2, b &<< 2)
            store(cbs, u + x)
            store(crs, v + x)
            x += 16
        }
        let p = src.assumingMemoryBound(to: UInt8.self)
        while x < w {
            let r = Int(p[x * 4]) * 4, g = Int(p[x * 4 + 1]) * 4, b = Int(p[x * 4 + 2]) * 4
            u[x] = cb(r, g, b)
            v[x] = cr(r, g, b)
            x += 1
        }
    }

    /// One row of 4:2:0 chroma from two rows of pixels (the same row twice at an odd bottom edge).
    private static func chroma420Row(_ row0: UnsafeRawPointer, _ row1: UnsafeRawPointer, width w: Int,
                                     cb u: UnsafeMutablePointer<UInt8>, cr v: UnsafeMutablePointer<UInt8>) {
        var cx = 0
        // 8 chroma samples = 16 pixels of each row; only whole pairs (an odd last column is scalar).
        // Red and blue (green and alpha) of a pixel ride in one word's halves; the sums of four
        // samples (at most 1020) stay inside each half.
        while cx * 2 + 16 <= w {
            let p0 = row0.advanced(by: cx * 8).loadUnaligned(as: SIMD16<UInt32>.self)
            let p1 = row1.advanced(by: cx * 8).loadUnaligned(as: SIMD16<UInt32>.self)
            let rb = (p0 & pairMask) &+ (p1 & pairMask), ga = ((p0 &>> 8) & pairMask) &+ ((p1 &>> 8) & pairMask)
            let rbSum = rb.evenHalf &+ rb.oddHalf, gSum = ga.evenHalf &+ ga.oddHalf
            // (Masking to 10 bits changes no sum but lets the compiler multiply in 16-bit lanes.)
            let (cbs, crs) = chroma(Lanes8(truncatingIfNeeded: rbSum & 0x3FF), Lanes8(truncatingIfNeeded: gSum & 0x3FF),
                                    Lanes8(truncatingIfNeeded: (rbSum &>> 16) & 0x3FF))
            store(cbs, u + cx)
            store(crs, v + cx)
            cx += 8
        }
        let p0 = row0.assumingMemoryBound(to: UInt8.self), p1 = row1.assumingMemoryBound(to: UInt8.self)
        let cw = (w + 1) / 2
        while cx < cw {
            let x0 = cx * 2, x1 = min(x0 + 1, w - 1)
            var r = 0, g = 0, b = 0
            for (row, x) in [(p0, x0), (p0, x1), (p1, x0), (p1, x1)] {
                r += Int(row[x * 4]); g += Int(row[x * 4 + 1]); b += Int(row[x * 4 + 2])
            }
            u[cx] = cb(r, g, b)
            v[cx] = cr(r, g, b)
            cx += 1
        }
    }
}
