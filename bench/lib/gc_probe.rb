# frozen_string_literal: true

# Loaded into a server under test with `RUBYOPT=-r/path/to/gc_probe.rb` and HERON_GC_PROBE=FILE:
# on SIGWINCH (which Ruby and Heron otherwise ignore) the process writes its GC.stat as JSON to
# FILE, so a benchmark can take the counts before and after a run (see Bench::GCStat), with
# whether YJIT is on in that process ("yjit"). Loaded into nothing else; it never ships with Heron.
if (path = ENV["HERON_GC_PROBE"])
  require "json"
  trap("WINCH") do
    # A thread, not the trap: the file write must not run in trap context.
    Thread.new { File.write("#{path}.tmp", JSON.generate(GC.stat.merge(yjit: defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?))) && File.rename("#{path}.tmp", path) }
  end
end
