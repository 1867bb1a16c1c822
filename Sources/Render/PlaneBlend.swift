import CMoonFFmpeg
import MoonreelMedia

/// Whole-frame mixing on the Y'CbCr planes of 4:2:0 frames (8-bit, or 10-bit in 16-bit
/// words): dissolves and full-frame opacity ramps computed on the video's own samples, as
/// ffmpeg's `xfade` does, instead of through 8-bit RGB and back.
enum PlaneBlend {
    /// Whether `frame` is a picture these functions handle.
    static func handles(_ frame: Frame) -> Bool {
        frame.pixelFormat == AV_PIX_FMT_YUV420P || frame.pixelFormat == AV_PIX_FMT_YUVJ420P || frame.pixelFormat == AV_PIX_FMT_YUV420P10LE
    }

    /// `bottom = bottom · (1 − opacity) + top · opacity`, sample by sample, rounded. The
    /// frames have one size and format; `bottom` must be writable.
    static func mix(_ top: Frame, onto bottom: Frame, opacity: Double) {
        let weight = Int32((min(max(opacity, 0), 1) * 65536).rounded())
        forEachPlane(of: bottom) { plane, width, height in
            let (source, sourceStride) = top.plane(plane)
            let (target, targetStride) = bottom.plane(plane)
            if bottom.pixelFormat == AV_PIX_FMT_YUV420P10LE {
                for y in 0..<height {
                    mixRow(UnsafeRawPointer(source + y * sourceStride).assumingMemoryBound(to: UInt16.self),
                           UnsafeMutableRawPointer(target + y * targetStride).assumingMemoryBound(to: UInt16.self),
                           count: width, weight: weight)
                }
            } else {
                for y in 0..<height {
                    mixRow(UnsafePointer(source + y * sourceStride), target + y * targetStride, count: width, weight: weight)
                }
            }
        }
    }

    @inline(__always)
    private static func mixRow<Sample: FixedWidthInteger & UnsignedInteger>(_ top: UnsafePointer<Sample>, _ bottom: UnsafeMutablePointer<Sample>,
                                                                            count: Int, weight: Int32) {
        let keep = 65536 - weight
        for x in 0..<count {
            bottom[x] = Sample(truncatingIfNeeded: (Int32(bottom[x]) * keep + Int32(top[x]) * weight + 32768) >> 16)
        }
    }

    /// Fills `frame` with an SDR colour in its matrix and range.
    static func fill(_ frame: Frame, with color: Color, matrix: YUVMatrix, fullRange: Bool) {
        let (kr, kb) = matrix.weights
        let y = kr * color.red + (1 - kr - kb) * color.green + kb * color.blue
        let cb = (color.blue - y) / (2 * (1 - kb)), cr = (color.red - y) / (2 * (1 - kr))
        let deep = frame.pixelFormat == AV_PIX_FMT_YUV420P10LE
        let scale = deep ? 4.0 : 1.0
        let values = fullRange
            ? [y * 255, 128 + cb * 255, 128 + cr * 255].map { min(max($0, 0), 255) * scale }
            : [16 + y * 219, 128 + cb * 224, 128 + cr * 224].map { $0 * scale }
        forEachPlane(of: frame) { plane, width, height in
            let (pixels, stride) = frame.plane(plane)
            let value = Int(values[plane].rounded())
            for row in 0..<height {
                let start = pixels + row * stride
                if deep {
                    UnsafeMutableRawPointer(start).assumingMemoryBound(to: UInt16.self).update(repeating: UInt16(value), count: width)
                } else {
                    start.update(repeating: UInt8(value), count: width)
                }
            }
        }
    }

    /// Tags a frame made here with the colours it holds.
    static func tag(_ frame: Frame, with color: ColorDescription) {
        frame.pointer.pointee.colorspace = color.space
        frame.pointer.pointee.color_range = color.range
        if color.dynamicRange.isHDR {
            frame.pointer.pointee.color_trc = color.dynamicRange.transfer
            frame.pointer.pointee.color_primaries = AVCOL_PRI_BT2020
        }
    }

    /// The Y'CbCr matrix a colour description names (BT.601 unless BT.709 or BT.2020).
    static func matrix(of color: ColorDescription) -> YUVMatrix {
        switch color.space {
        case AVCOL_SPC_BT709: .bt709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: .bt2020
        default: .bt601
        }
    }

    /// Calls `body(plane, width, height)` for the luma and both chroma planes.
    private static func forEachPlane(of frame: Frame, _ body: (Int, Int, Int) -> Void) {
        body(0, frame.width, frame.height)
        for plane in 1...2 { body(plane, (frame.width + 1) / 2, (frame.height + 1) / 2) }
    }
}
