import MoonreelEngine

/// The timed-text and CSV readers on any bytes: the first byte picks the reader, the rest is
/// the file. Errors are fine; a crash, a hang or a leak is a finding.
func fuzzTimedText(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let names = ["song.csv", "song.lrc", "song.srt", "song.vtt", "song.ass", "song.txt", "table.csv"]
    let name = names[Int(data[0]) % names.count]
    if name == "table.csv" {
        _ = try? CSVReader.parse(bytes: bytes, fileName: name)
    } else {
        let total = data[0] & 0x80 != 0 ? MediaTime(value: 180, timescale: 1) : nil
        // Not strict: every dropped block is read past and noted, the longest path.
        var log = CueLog(strict: data[0] & 0x40 != 0)
        _ = try? CueReader.parse(bytes: bytes, fileName: name, totalDuration: total, log: &log)
    }
    return 0
}
