import MoonreelMedia
import MoonreelPlatform
import MoonreelRender
/// How much memory an export may take: its pictures in flight (decoded, composed, queued,
/// held by the encoder), the render caches and the encoders' buffers all count against
/// `ExportSession.memoryLimit`. Pictures that could not fit even alone are refused before
/// any is made; after that, the growth of the process's resident memory since the export
/// began is checked at every frame written.
struct ExportMemoryBudget {
    let limit: Int64
    private let baseline: Int64
    private let size: (width: Int, height: Int)
    private let checkInterval: Int64

    /// Bytes a picture of each pixel needs at the least while exporting: five 4:2:0 pictures
    /// in flight (three queued, two in the renderer) and one BGRA canvas.
    static let leastBytesPerPixel = 1.5 * 5 + 4

    init(limit: Int64, plan: VideoPlan) throws {
        (self.limit, size) = (limit, (plan.outputWidth, plan.outputHeight))
        checkInterval = Int64(max(1, (8 << 20) / max(plan.outputWidth * plan.outputHeight, 1)))
        let least = Double(plan.outputWidth) * Double(plan.outputHeight) * ExportMemoryBudget.leastBytesPerPixel
        guard least <= Double(limit) else {
            throw ExportError(.memoryLimit, "pictures of \(plan.outputWidth)×\(plan.outputHeight) need at least \(ExportMemoryBudget.mebibytes(least)) MiB while exporting, "
                              + "over the export's memory limit (\(ExportMemoryBudget.mebibytes(Double(limit))) MiB); lower the render size or raise the limit")
        }
        baseline = residentBytes() ?? 0
    }

    /// Throws once the process has grown by more than the limit since the export began.
    /// Resident memory is read once per 8 MB of pictures written (every frame of a huge
    /// picture, every hundredth of a small one): the growth it guards against comes with them.
    func check(framesWritten: Int64) throws {
        guard framesWritten % checkInterval == 0 || framesWritten == 1,
              let resident = residentBytes(), resident - baseline > limit else { return }
        throw ExportError(.memoryLimit, "the export grew by \(ExportMemoryBudget.mebibytes(Double(resident - baseline))) MiB by frame \(framesWritten) "
                          + "(pictures of \(size.width)×\(size.height)), over the export's memory limit (\(ExportMemoryBudget.mebibytes(Double(limit))) MiB); "
                          + "lower the render size or raise the limit")
    }

    private static func mebibytes(_ bytes: Double) -> Int { Int((bytes / 1_048_576).rounded(.up)) }
}
