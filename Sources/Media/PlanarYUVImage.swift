import CMoonFFmpeg

/// Y'CbCr matrix of a video frame.
package enum YUVMatrix: Sendable, Hashable {
    case bt601, bt709, bt2020

    /// Luma weights of red and blue (green is the rest).
    package var weights: (red: Double, blue: Double) {
        switch self {
        case .bt601: return (0.299, 0.114)
        case .bt709: return (0.2126, 0.0722)
        case .bt2020: return (0.2627, 0.0593)
        }
    }
}

/// Limited ("tv": Y 16…235, chroma 16…240 in 8 bits) or full ("pc": 0…255) range.
package enum YUVRange: Sendable, Hashable { case limited, full }

/// A borrowed view of a planar 4:2:0 picture: 8-bit SDR (yuv420p) or 10-bit HDR
/// (yuv420p10le, BT.2020, HLG or PQ), such as a decoded `AVFrame`'s data[0…2] and
/// linesize[0…2] (strides in bytes). Chroma planes are ⌈width/2⌉×⌈height/2⌉.
/// Valid only while the frame that owns the planes is alive and not used elsewhere.
/// Sizes are expected even (the export refuses odd 4:2:0 sizes): on an odd edge, the last
/// chroma sample also takes in sprite pixels just past the frame.
package struct PlanarYUVImage {
    package var luma: UnsafeMutablePointer<UInt8>
    package var lumaStride: Int
    package var cb: UnsafeMutablePointer<UInt8>
    package var cbStride: Int
    package var cr: UnsafeMutablePointer<UInt8>
    package var crStride: Int
    package var width: Int
    package var height: Int
    package var matrix: YUVMatrix
    package var range: YUVRange
    /// SDR (8-bit samples) or HDR (10-bit samples in 16-bit words).
    package var dynamicRange: DynamicRange

    package init(luma: UnsafeMutablePointer<UInt8>, lumaStride: Int, cb: UnsafeMutablePointer<UInt8>, cbStride: Int,
                cr: UnsafeMutablePointer<UInt8>, crStride: Int, width: Int, height: Int,
                matrix: YUVMatrix, range: YUVRange, dynamicRange: DynamicRange = .sdr) {
        (self.luma, self.lumaStride, self.cb, self.cbStride, self.cr, self.crStride) = (luma, lumaStride, cb, cbStride, cr, crStride)
        (self.width, self.height, self.matrix, self.range, self.dynamicRange) = (width, height, matrix, range, dynamicRange)
    }

    /// The planes of a decoded 4:2:0 frame: 8-bit (yuv420p, or yuvj420p as full range) with
    /// the matrix it is tagged with (BT.709 when tagged so or, untagged, at 720 lines and
    /// more; BT.601 otherwise), or 10-bit HDR (yuv420p10le tagged HLG or PQ, BT.2020); nil
    /// for other frames.
    package init?(frame: UnsafeMutablePointer<AVFrame>) {
        let f = frame.pointee
        let format = AVPixelFormat(f.format)
        let hdr: DynamicRange = f.color_trc == AVCOL_TRC_ARIB_STD_B67 ? .hlg : f.color_trc == AVCOL_TRC_SMPTE2084 ? .pq : .sdr
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P || (format == AV_PIX_FMT_YUV420P10LE && hdr.isHDR) else { return nil }
        let planes = withUnsafeBytes(of: f.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).prefix(3)) }
        let strides = withUnsafeBytes(of: f.linesize) { Array($0.bindMemory(to: Int32.self).prefix(3)) }
        guard let luma = planes[0], let cb = planes[1], let cr = planes[2] else { return nil }
        let untagged = f.colorspace == AVCOL_SPC_UNSPECIFIED || f.colorspace == AVCOL_SPC_RGB
        let matrix: YUVMatrix = hdr.isHDR ? .bt2020
            : f.colorspace == AVCOL_SPC_BT709 || (untagged && VideoColor.standardMatrix(forHeight: Int(f.height)) == AVCOL_SPC_BT709) ? .bt709 : .bt601
        self.init(luma: luma, lumaStride: Int(strides[0]), cb: cb, cbStride: Int(strides[1]), cr: cr, crStride: Int(strides[2]),
                  width: Int(f.width), height: Int(f.height), matrix: matrix,
                  range: format == AV_PIX_FMT_YUVJ420P || f.color_range == AVCOL_RANGE_JPEG ? .full : .limited,
                  dynamicRange: hdr)
    }

    package var chromaWidth: Int { (width + 1) / 2 }
    package var chromaHeight: Int { (height + 1) / 2 }
}
