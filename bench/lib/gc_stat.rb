# frozen_string_literal: true

require "json"

module Bench
  # GC counts of a Ruby server under test, read through bench/lib/gc_probe.rb: {#env} goes into
  # the server's environment, {#sample} asks it for its GC.stat (a line on the probe's named pipe)
  # and waits for the answer. Samples of a process that did not load the probe are nil.
  class GCStat
    PROBE = File.expand_path("gc_probe.rb", __dir__)
    # GC.stat keys kept: :time is the milliseconds spent in GC (Ruby 3.1+).
    KEYS = %w[count major_gc_count minor_gc_count time total_allocated_objects old_objects yjit].freeze

    # What one run cost in GC: the difference of two samples; `yjit` is whether YJIT was on in
    # the server (the later sample's).
    Delta = Struct.new(:count, :major, :minor, :time_s, :allocated, :old_objects, :yjit, keyword_init: true) do
      # @param cpu_s [Float] the server's CPU seconds over the same run.
      # @return [Float] the share of that CPU time spent in GC (0 to 1).
      def share(cpu_s) = cpu_s.positive? ? time_s / cpu_s : 0.0

      # @param requests [Integer] requests served in the run.
      # @return [Float] collections (minor and major) per 1,000 requests.
      def per_thousand(requests) = requests.positive? ? 1000.0 * count / requests : 0.0
    end

    def initialize(dir)
      @path = File.join(dir, "gc-#{Process.pid}-#{object_id}.json")
    end

    # @return [Hash] environment for the server process.
    def env = { "HERON_GC_PROBE" => @path, "RUBYOPT" => "#{ENV.fetch('RUBYOPT', '')} -r#{PROBE}".strip }

    # @param pid [Integer] the server's process.
    # @return [Hash, nil] its GC.stat (string keys), or nil when it does not answer within 2 s.
    def sample(pid)
      File.delete(@path) if File.exist?(@path)
      return nil unless Process.kill(0, pid) && ask
      40.times do
        return JSON.parse(File.read(@path)).slice(*KEYS) if File.exist?(@path)
        sleep 0.05
      end
      nil
    rescue Errno::ESRCH
      nil
    end

    # Writes a line to the probe's pipe; false when no probe reads it within a second (ENXIO with
    # O_NONBLOCK: the probe reopens the pipe after each writer has gone).
    def ask
      20.times do
        File.open("#{@path}.fifo", File::WRONLY | File::NONBLOCK) { |pipe| pipe.write("\n") }
        return true
      rescue Errno::ENXIO, Errno::ENOENT
        sleep 0.05
      end
      false
    end

    # @return [Delta, nil] nil unless both samples are there.
    def self.delta(before, after)
      return nil unless before && after
      d = ->(key) { after.fetch(key, 0) - before.fetch(key, 0) }
      Delta.new(count: d.call("count"), major: d.call("major_gc_count"), minor: d.call("minor_gc_count"),
                time_s: d.call("time") / 1000.0, allocated: d.call("total_allocated_objects"), old_objects: d.call("old_objects"),
                yjit: after["yjit"])
    end
  end
end
