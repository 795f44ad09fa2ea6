# frozen_string_literal: true

# Loaded into a server under test with RUBYOPT="-r.../bench/lib/gc_report.rb" and
# HERON_BENCH_GC_OUT=FILE: at exit, writes the process's garbage collections since it started
# (count, minor, major and why, total GC time, the longest pause, the median minor pause) to
# FILE as JSON, and the minor collections that ran while many requests were in flight (the
# requests each collection pauses, and whose fibers it marks): a thread looks every 2 ms whether
# a collection ran and notes the Heron reactor's requests in flight then (Server::ReactorThread#in_flight).
require "json"

module Bench
  # The at-exit GC summary of the process it is loaded into.
  module GCReport
    # Minor collections count as "loaded" from this many requests in flight.
    LOADED = 1000

    # @return [Hash] collections since boot, with times in milliseconds.
    def self.summary(first = 1, in_flight = {})
      stat = GC.stat
      raw = GC::Profiler.raw_data
      pauses = raw.map { |gc| gc[:GC_TIME] * 1000 }
      majors = raw.filter_map { |gc| gc.dig(:GC_FLAGS, :major_by) }
      minors = raw.reject { |gc| gc.dig(:GC_FLAGS, :major_by) }.map { |gc| gc[:GC_TIME] * 1000 }.sort
      { "count" => stat[:count], "minor" => stat[:minor_gc_count], "major" => stat[:major_gc_count], "time_ms" => stat[:time],
        "max_pause_ms" => pauses.max.to_f.round(1), "major_by" => majors.tally, "allocated" => stat[:total_allocated_objects],
        "median_minor_pause_ms" => minors.empty? ? nil : minors[minors.size / 2].round(1),
        "loaded_minors" => loaded_minors(raw, first, in_flight) }
    end

    # @return [Hash, nil] the minor collections with LOADED or more requests in flight: how many,
    #   their median and longest pause (ms) and the median requests in flight at them.
    def self.loaded_minors(raw, first, in_flight)
      loaded = raw.each_with_index.filter_map do |gc, index|
        flight = in_flight[first + index]
        [gc[:GC_TIME] * 1000, flight] if flight && flight >= LOADED && !gc.dig(:GC_FLAGS, :major_by)
      end
      return nil if loaded.empty?
      pauses = loaded.map(&:first).sort
      { "count" => loaded.size, "median_ms" => pauses[pauses.size / 2].round(1), "max_ms" => pauses.last.round(1),
        "median_in_flight" => loaded.map(&:last).sort[loaded.size / 2] }
    end

    # Notes the requests in flight at each collection (the collection's number => count).
    # @return [Hash{Integer => Integer}]
    def self.watch
      in_flight = {}
      Thread.new do
        seen = GC.count
        loop do
          sleep 0.002
          next if (count = GC.count) == seen
          reactor = reactor_thread or next
          flight = reactor.in_flight
          (seen + 1..count).each { |number| in_flight[number] = flight }
          seen = count
        end
      end
      in_flight
    end

    def self.reactor_thread
      @reactor_thread ||= defined?(Heron::Server::ReactorThread) && ObjectSpace.each_object(Heron::Server::ReactorThread).first
    end
  end
end

if (out = ENV.fetch("HERON_BENCH_GC_OUT", nil))
  GC::Profiler.enable
  first_profiled = GC.count + 1
  in_flight = Bench::GCReport.watch
  at_exit { File.write(out, JSON.generate(Bench::GCReport.summary(first_profiled, in_flight))) }
end
