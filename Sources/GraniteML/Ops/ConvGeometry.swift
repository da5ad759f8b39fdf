/// The spatial arithmetic shared by Conv, ConvTranspose and the pools: kernel, strides,
/// dilations and begin/end pads for each of the two spatial axes.
package struct ConvGeometry {
    package var kernel: [Int]
    package var strides: [Int]
    package var dilations: [Int]
    package var padBegin: [Int]
    package var padEnd: [Int]

    /// Reads the attributes of a 2-D windowed op whose input spatial size is `input`.
    package init(_ c: BuildContext, input: [Int], kernel: [Int]) throws(MLError) {
        let node = c.node
        self.kernel = kernel
        strides = node.ints("strides") ?? [1, 1]
        dilations = node.ints("dilations") ?? [1, 1]
        let pads = node.ints("pads") ?? [0, 0, 0, 0]
        guard strides.count == 2, dilations.count == 2, pads.count == 4, kernel.count == 2 else {
            throw c.unsupported("only 2-D windows are supported (strides \(strides), dilations \(dilations), pads \(pads))")
        }
        guard strides.allSatisfy({ $0 > 0 }), dilations.allSatisfy({ $0 > 0 }), pads.allSatisfy({ $0 >= 0 }),
              kernel.allSatisfy({ $0 > 0 }) else {
            throw c.invalid("strides, dilations and kernel must be positive and pads non-negative")
        }
        guard Self.bounded(strides + dilations + pads + kernel) else {
            throw c.invalid("strides \(strides), dilations \(dilations), pads \(pads) or kernel \(kernel) past \(Self.attributeLimit)")
        }
        padBegin = [pads[0], pads[1]]
        padEnd = [pads[2], pads[3]]
        let autoPad = node.string("auto_pad", "NOTSET")
        switch autoPad {
        case "NOTSET": break
        case "VALID": padBegin = [0, 0]; padEnd = [0, 0]
        case "SAME_UPPER", "SAME_LOWER":
            for a in 0..<2 {
                let out = (input[a] + strides[a] - 1) / strides[a]
                let total = max((out - 1) * strides[a] + extent(a) - input[a], 0)
                padBegin[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2
                padEnd[a] = total - padBegin[a]
            }
        default: throw c.unsupported("auto_pad \(autoPad)")
        }
    }

    /// The largest stride, dilation, pad or kernel extent accepted: far beyond any real
    /// network, and small enough that the window arithmetic below cannot overflow.
    static let attributeLimit = 1 << 24

    /// Whether every value lies within ±``attributeLimit``.
    static func bounded(_ values: [Int]) -> Bool {
        values.allSatisfy { $0 >= -attributeLimit && $0 <= attributeLimit }
    }

    /// The dilated kernel extent on axis `a`.
    func extent(_ a: Int) -> Int { (kernel[a] - 1) * dilations[a] + 1 }

    /// Output size on axis `a` of a forward window (floor, or ceil with `ceil`).
    package func output(_ input: Int, axis a: Int, ceil: Bool = false) -> Int {
        let span = input + padBegin[a] + padEnd[a] - extent(a)
        if span < 0 { return 0 }
        var out = (ceil ? (span + strides[a] - 1) / strides[a] : span / strides[a]) + 1
        // A ceil-mode window must start inside the input or its begin padding.
        if ceil && (out - 1) * strides[a] >= input + padBegin[a] { out -= 1 }
        return out
    }
}
