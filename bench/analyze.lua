-- Analyses a song for bench/run.sh: beats, onsets, levels and loudness in one pass (the
-- caller points XDG_CACHE_HOME at an empty folder, so nothing comes from the cache).
-- usage: moonreel run bench/analyze.lua SONG
local a = av.analyze(av.asset(arg[1]))
print(a.tempo, #a.beats, #a.onsets, #a.loudness)
