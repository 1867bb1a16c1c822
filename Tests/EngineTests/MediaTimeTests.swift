import Testing
@testable import Engine

@Suite struct MediaTimeTests {
    @Test func addsAcrossTimescales() {
        let a = MediaTime(value: 1, timescale: 30)
        let b = MediaTime(value: 1, timescale: 25)
        #expect(a + b == MediaTime(value: 11, timescale: 150))
    }
}
