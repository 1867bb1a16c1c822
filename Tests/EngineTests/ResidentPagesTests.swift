import Foundation
import Testing
@testable import MoonreelEngine

/// What the `moonreel` command does to keep less resident while it renders.
@Suite struct ResidentPagesTests {
    @Test func freedHeapIsGivenBack() throws {
        // Blocks below glibc's mmap threshold come from an arena; the last one keeps the
        // freed ones inside it, where only a trim gives them back.
        let size = 100 << 10
        let blocks = try (0..<64).map { _ in try #require(malloc(size)) }
        for block in blocks { memset(block, 1, size) }
        for block in blocks.dropLast() { free(block) }
        #expect(ResidentPages.returnFreeHeap())
        free(blocks.last)
    }
}
