import CMoonAVShim

/// What a process that renders (the `moonreel` command) does to keep less resident: choices
/// for the whole process, so its host makes them, not the engine.
package enum ResidentPages {
    /// Gives the free memory inside glibc's heap arenas back to the system. Blocks of a few
    /// hundred KiB (decoders' per-picture tables, drawings of text made and freed as lines come
    /// and go) are carved from the arenas once glibc's mmap threshold has risen past them (it
    /// rises to the size of each mapped block freed, a 3 MiB picture say), and the holes they
    /// leave are not given back by themselves: at the lyrics job's mid-point its arenas held
    /// 10 MiB free. Once a second costs a walk of the arenas and keeps its peak about 5 MiB
    /// lower; holding the threshold at 128 KiB instead did as much but mapped and faulted in
    /// afresh every such block made per frame (a LowQuality export's scaled pictures: 0.1 s
    /// more system time in 5.8 s).
    @discardableResult
    package static func returnFreeHeap() -> Bool {
        moon_malloc_trim() == 1
    }
}
