# frozen_string_literal: true

# Loaded into a server under test with RUBYOPT="-r.../bench/lib/gc_report.rb" and
# HERON_BENCH_GC_OUT=FILE: at exit, writes the process's garbage collections since it started
# (count, minor, major and why, total GC time, the longest pause, the median minor pause) to
# FILE as JSON.
require "json"

module Bench
  # The at-exit GC summary of the process it is loaded into.
  module GCReport
    # @return [Hash] collections since boot, with times in milliseconds.
    def self.summary
      stat = GC.stat
      pauses = GC::Profiler.raw_data.map { |gc| gc[:GC_TIME] * 1000 }
      majors = GC::Profiler.raw_data.filter_map { |gc| gc.dig(:GC_FLAGS, :major_by) }
      minors = GC::Profiler.raw_data.reject { |gc| gc.dig(:GC_FLAGS, :major_by) }.map { |gc| gc[:GC_TIME] * 1000 }.sort
      { "count" => stat[:count], "minor" => stat[:minor_gc_count], "major" => stat[:major_gc_count], "time_ms" => stat[:time],
        "max_pause_ms" => pauses.max.to_f.round(1), "major_by" => majors.tally, "allocated" => stat[:total_allocated_objects],
        "median_minor_pause_ms" => minors.empty? ? nil : minors[minors.size / 2].round(1) }
    end
  end
end

if (out = ENV.fetch("HERON_BENCH_GC_OUT", nil))
  GC::Profiler.enable
  at_exit { File.write(out, JSON.generate(Bench::GCReport.summary)) }
end
