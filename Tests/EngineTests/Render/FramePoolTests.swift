import CMoonAVShim
import CMoonFFmpeg
import Testing
@testable import MoonreelEngine
@testable import MoonreelMedia

/// Pooled pictures: the copy made before drawing holds the same pixels in a buffer of its
/// own, leaves the other holder's picture alone, and its memory comes back for the next one.
@Suite struct FramePoolTests {
    /// Writes `value + row + plane` into every visible byte of `frame`'s three planes.
    static func paint(_ frame: Frame, _ value: UInt8) {
        for plane in 0..<3 {
            let (width, height) = plane == 0 ? (frame.width, frame.height) : ((frame.width + 1) / 2, (frame.height + 1) / 2)
            let stride = Int(plane == 0 ? frame.pointer.pointee.linesize.0 : plane == 1 ? frame.pointer.pointee.linesize.1 : frame.pointer.pointee.linesize.2)
            guard let base = plane == 0 ? frame.pointer.pointee.data.0 : plane == 1 ? frame.pointer.pointee.data.1 : frame.pointer.pointee.data.2 else { continue }
            for row in 0..<height {
                for column in 0..<width { base[row * stride + column] = value &+ UInt8(truncatingIfNeeded: row + plane) }
            }
        }
    }

    static func pixels(_ frame: Frame) -> [UInt8] {
        let size = av_image_get_buffer_size(AVPixelFormat(frame.pointer.pointee.format), Int32(frame.width), Int32(frame.height), 1)
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let data = [frame.pointer.pointee.data.0, frame.pointer.pointee.data.1, frame.pointer.pointee.data.2, frame.pointer.pointee.data.3]
        let lines = [frame.pointer.pointee.linesize.0, frame.pointer.pointee.linesize.1, frame.pointer.pointee.linesize.2, frame.pointer.pointee.linesize.3]
        data.map { UnsafePointer($0) }.withUnsafeBufferPointer { planes in
            lines.withUnsafeBufferPointer { strides in
                _ = av_image_copy_to_buffer(&bytes, size, planes.baseAddress, strides.baseAddress,
                                            AVPixelFormat(frame.pointer.pointee.format), Int32(frame.width), Int32(frame.height), 1)
            }
        }
        return bytes
    }

    @Test func aSharedPictureIsCopiedIntoThePoolAndTheOtherHolderKeepsItsPixels() throws {
        let pool = try FramePool(width: 99, height: 51, format: AV_PIX_FMT_YUV420P)
        let decoded = try Frame(width: 99, height: 51, format: AV_PIX_FMT_YUV420P)
        Self.paint(decoded, 40)
        decoded.pointer.pointee.pts = 1234
        let held = try decoded.reference()                 // the decoder's reference picture
        #expect(av_frame_is_writable(decoded.pointer) == 0)

        try pool.makeWritable(decoded)
        #expect(av_frame_is_writable(decoded.pointer) != 0)
        #expect(decoded.pointer.pointee.pts == 1234 && decoded.width == 99 && decoded.height == 51)
        #expect(Self.pixels(decoded) == Self.pixels(held))
        Self.paint(decoded, 200)                           // drawing on the copy
        #expect(Self.pixels(decoded) != Self.pixels(held))
        #expect(Self.pixels(held).first == 40)
    }

    @Test func aWritablePictureIsLeftAsItIsAndBuffersAreReused() throws {
        let pool = try FramePool(width: 64, height: 32, format: AV_PIX_FMT_YUV420P)
        let own = try Frame(width: 64, height: 32, format: AV_PIX_FMT_YUV420P)
        let before = own.pointer.pointee.data.0
        try pool.makeWritable(own)
        #expect(own.pointer.pointee.data.0 == before)

        var first: UnsafeMutablePointer<UInt8>?
        do {
            let pooled = try pool.frame()
            first = pooled.pointer.pointee.data.0
            #expect(pool.fits(pooled))
        }
        let again = try pool.frame()
        #expect(again.pointer.pointee.data.0 == first, "the buffer given back is handed out again")
    }
}
