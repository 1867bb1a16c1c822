import CMoonFFmpeg

/// Colour description of YUV frames: matrix, range and dynamic range (SDR, or HDR in
/// BT.2020 with HLG or PQ), e.g. of the frames the encoder receives.
package struct ColorDescription: Sendable, Equatable {
    package var space: AVColorSpace
    package var range: AVColorRange
    package var dynamicRange = DynamicRange.sdr

    package init(space: AVColorSpace, range: AVColorRange, dynamicRange: DynamicRange = .sdr) {
        (self.space, self.range, self.dynamicRange) = (space, range, dynamicRange)
    }

    /// The frames of an HDR export: BT.2020, limited range, 10-bit.
    package static func hdr(_ range: DynamicRange) -> ColorDescription {
        ColorDescription(space: AVCOL_SPC_BT2020_NCL, range: AVCOL_RANGE_MPEG, dynamicRange: range)
    }

    /// The frame format of pictures in these colours.
    package var pixelFormat: AVPixelFormat { dynamicRange.pixelFormat }

    /// Limited range in the matrix of the untagged rule (`VideoColor.standardMatrix`), so
    /// players that ignore the tags still read the pixels right.
    package static func forOutput(width: Int, height: Int) -> ColorDescription {
        ColorDescription(space: VideoColor.standardMatrix(forHeight: height), range: AVCOL_RANGE_MPEG)
    }

    /// What a decoded frame says about itself, with the usual guesses when it says nothing.
    package static func of(_ frame: Frame) -> ColorDescription {
        let f = frame.pointer.pointee
        return guessed(space: f.colorspace, range: f.color_range, format: frame.pixelFormat, height: frame.height, transfer: f.color_trc)
    }

    /// What a stream's parameters say of its frames, with the same guesses as `of(_ frame:)`.
    package static func of(_ parameters: AVCodecParameters) -> ColorDescription {
        guessed(space: parameters.color_space, range: parameters.color_range, format: AVPixelFormat(rawValue: parameters.format),
                height: Int(parameters.height), transfer: parameters.color_trc)
    }

    private static func guessed(space: AVColorSpace, range: AVColorRange, format: AVPixelFormat, height: Int,
                                transfer: AVColorTransferCharacteristic) -> ColorDescription {
        let matrix = space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RGB ? VideoColor.standardMatrix(forHeight: height) : space
        let fullRangeFormats: Set<AVPixelFormat> = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P]
        let full = range == AVCOL_RANGE_JPEG || fullRangeFormats.contains(format)
        return ColorDescription(space: matrix, range: full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG, dynamicRange: .of(transfer: transfer))
    }

    /// swscale's coefficient tables know 601, 709, FCC, 240M and BT.2020.
    var swsSpace: Int32 {
        switch space {
        case AVCOL_SPC_BT709: return SWS_CS_ITU709
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020
        case AVCOL_SPC_FCC: return SWS_CS_FCC
        case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M
        default: return SWS_CS_ITU601
        }
    }
}

/// Converts frames between sizes, pixel formats and colour matrices with one cached
/// `SwsContext` (recreated only when the conversion changes). One owner thread.
package final class Scaler {
    private var context: OpaquePointer?
    private var configured: (ColorDescription, ColorDescription)?
    private let flags: Int32

    package init(flags: Int32 = SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT) { self.flags = flags }

    deinit { sws_freeContext(context) }

    /// Converts `source` into a new frame of the given size and format.
    package func convert(_ source: Frame, width: Int, height: Int, format: AVPixelFormat,
                         sourceColor: ColorDescription? = nil, outputColor: ColorDescription) throws -> Frame {
        let output = try Frame(width: width, height: height, format: format)
        try convert(source, into: output, sourceColor: sourceColor ?? .of(source), outputColor: outputColor)
        return output
    }

    func convert(_ source: Frame, into output: Frame, sourceColor: ColorDescription, outputColor: ColorDescription) throws {
        let previous = context
        context = sws_getCachedContext(context, Int32(source.width), Int32(source.height), source.pixelFormat,
                                       Int32(output.width), Int32(output.height), output.pixelFormat,
                                       flags, nil, nil, nil)
        guard let context else { throw EngineError("cannot convert \(source.pixelFormat) \(source.width)×\(source.height) frames", kind: .unsupported) }
        // The context may have been made anew at the same address: swscale turns a full-range
        // "yuvj" input into its plain format when the details are set, and the next cached
        // lookup then sees another format and rebuilds the context with default ranges (an
        // Android 4K60 clip's frames from the fifth on came out with luma squeezed to limited
        // range, 30 dB). So the ranges in force are read back, not assumed.
        if context != previous || configured.map({ $0 != (sourceColor, outputColor) }) ?? true
            || !Self.hasRanges(context, source: sourceColor, output: outputColor) {
            sws_setColorspaceDetails(context, sws_getCoefficients(sourceColor.swsSpace), sourceColor.range == AVCOL_RANGE_JPEG ? 1 : 0,
                                     sws_getCoefficients(outputColor.swsSpace), outputColor.range == AVCOL_RANGE_JPEG ? 1 : 0,
                                     0, 1 << 16, 1 << 16)
            configured = (sourceColor, outputColor)
        }
        try check(sws_scale_frame(context, output.pointer, source.pointer), "converting a frame")
        output.pointer.pointee.colorspace = outputColor.space
        output.pointer.pointee.color_range = outputColor.range
        if outputColor.dynamicRange.isHDR {
            output.pointer.pointee.color_trc = outputColor.dynamicRange.transfer
            output.pointer.pointee.color_primaries = AVCOL_PRI_BT2020
        }
    }

    /// Whether `context` converts with the ranges of `source` and `output` now.
    private static func hasRanges(_ context: OpaquePointer, source: ColorDescription, output: ColorDescription) -> Bool {
        var (inverse, table): (UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) = (nil, nil)
        var (sourceRange, outputRange, brightness, contrast, saturation): (Int32, Int32, Int32, Int32, Int32) = (0, 0, 0, 0, 0)
        guard sws_getColorspaceDetails(context, &inverse, &sourceRange, &table, &outputRange, &brightness, &contrast, &saturation) >= 0 else {
            return true // not a YUV conversion: no ranges to keep
        }
        return sourceRange == (source.range == AVCOL_RANGE_JPEG ? 1 : 0) && outputRange == (output.range == AVCOL_RANGE_JPEG ? 1 : 0)
    }
}

/// The eight ways a picture can be turned or mirrored onto a grid of the same pixels.
/// Used for phone video: rotating the planes directly is exact and far cheaper than a
/// general resampling warp.
package struct QuarterTurn: Equatable {
    /// Integer matrix mapping source pixel centres to output pixel centres.
    let a: Int, b: Int, c: Int, d: Int

    /// Recognises a transform that maps a `width`×`height` frame exactly onto its bounding
    /// box at (0, 0) with a quarter turn or mirror and no scaling.
    package init?(_ t: AffineTransform, width: Int, height: Int) {
        let entries = [t.a, t.b, t.c, t.d]
        guard entries.allSatisfy({ $0 == 0 || $0 == 1 || $0 == -1 }), abs(t.determinant) == 1 else { return nil }
        let box = t.apply(Rect(x: 0, y: 0, width: Double(width), height: Double(height)))
        guard abs(box.x) < 1e-6, abs(box.y) < 1e-6 else { return nil }
        (a, b, c, d) = (Int(t.a), Int(t.b), Int(t.c), Int(t.d))
    }

    package var swapsAxes: Bool { a == 0 }

    /// Turns every plane of a planar 4:2:0 frame (yuv420p, or 10-bit yuv420p10le) into a new frame.
    package func apply(to source: Frame, planes: Int = 3) throws -> Frame {
        let (w, h) = swapsAxes ? (source.height, source.width) : (source.width, source.height)
        let output = try Frame(width: w, height: h, format: source.pixelFormat)
        let wideSamples = source.pixelFormat == AV_PIX_FMT_YUV420P10LE
        for plane in 0..<planes {
            let shift = plane == 0 ? 0 : 1 // 4:2:0 chroma is half size both ways
            let sw = (source.width + shift) >> shift, sh = (source.height + shift) >> shift
            if wideSamples {
                remap(source.plane(plane), width: sw, height: sh, into: output.plane(plane), as: UInt16.self)
            } else {
                remap(source.plane(plane), width: sw, height: sh, into: output.plane(plane), as: UInt8.self)
            }
        }
        output.pointer.pointee.color_trc = source.pointer.pointee.color_trc
        output.pointer.pointee.color_primaries = source.pointer.pointee.color_primaries
        output.pointer.pointee.colorspace = source.pointer.pointee.colorspace
        output.pointer.pointee.color_range = source.pointer.pointee.color_range
        return output
    }

    /// Output pixel (x', y') shows source pixel M⁻¹(x', y'); walking the output in tiles
    /// keeps both reads and writes inside the cache. Strides are in bytes, as AVFrame has them.
    private func remap<Sample>(_ source: (UnsafeMutablePointer<UInt8>, Int), width: Int, height: Int,
                               into output: (UnsafeMutablePointer<UInt8>, Int), as: Sample.Type) {
        let size = MemoryLayout<Sample>.stride
        let src = UnsafeMutableRawPointer(source.0).assumingMemoryBound(to: Sample.self), srcStride = source.1 / size
        let dst = UnsafeMutableRawPointer(output.0).assumingMemoryBound(to: Sample.self), dstStride = output.1 / size
        let (outWidth, outHeight) = swapsAxes ? (height, width) : (width, height)
        // Inverse of an integer orthogonal matrix is its transpose.
        let (ia, ib, ic, id) = (a, c, b, d)
        // Source position of output (0,0) and the source steps per output x and y.
        let originX = (ia < 0 || ic < 0) ? width - 1 : 0
        let originY = (ib < 0 || id < 0) ? height - 1 : 0
        let stepX = ia + ib * srcStride   // output x+1 → source (x + ia, y + ib)
        let stepY = ic + id * srcStride   // output y+1 → source (x + ic, y + id)
        let origin = originX + originY * srcStride
        let tile = 32
        for tileY in stride(from: 0, to: outHeight, by: tile) {
            for tileX in stride(from: 0, to: outWidth, by: tile) {
                for y in tileY..<min(tileY + tile, outHeight) {
                    var s = origin + y * stepY + tileX * stepX
                    let row = dst + y * dstStride
                    for x in tileX..<min(tileX + tile, outWidth) {
                        row[x] = src[s]
                        s += stepX
                    }
                }
            }
        }
    }
}
