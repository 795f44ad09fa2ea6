# frozen_string_literal: true

# Loaded into a server under test with `RUBYOPT=-r/path/to/gc_probe.rb` and HERON_GC_PROBE=FILE:
# a thread waits on the named pipe FILE.fifo and, for each line written to it, writes the
# process's GC.stat as JSON to FILE, with whether YJIT is on in that process ("yjit"), so a
# benchmark can take the counts before and after a run (see Bench::GCStat). A pipe rather than a
# signal: Itsi's Rust core takes the signals a Ruby trap would. The thread sleeps in read(2)
# between samples. Loaded into nothing else; it never ships with Heron.
if (path = ENV["HERON_GC_PROBE"])
  require "json"
  fifo = "#{path}.fifo"
  File.mkfifo(fifo) unless File.exist?(fifo)
  Thread.new do
    loop do
      File.foreach(fifo) do
        stat = GC.stat.merge(yjit: defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?)
        File.write("#{path}.tmp", JSON.generate(stat))
        File.rename("#{path}.tmp", path)
      end
    end
  end
end
