# frozen_string_literal: true

require "json"
require "fileutils"

module Heron
  class Metrics
    # How a cluster's workers hand their counts to the master: each worker writes its
    # {Metrics#snapshot} as JSON to `<dir>/<pid>.json` (written to a temporary name and renamed,
    # so a reader never sees half a file) about once a second; the master reads them all when
    # scraped. When a worker dies the master {#discard}s its file.
    class SnapshotDirectory
      # @return [String] the directory the snapshots live in.
      attr_reader :path

      # @param path [String] a directory shared by the master and its workers (created if missing).
      def initialize(path)
        @path = path
        FileUtils.mkdir_p(path)
      end

      # Writes one process's snapshot.
      # @param snapshot [Hash] a {Metrics#snapshot}.
      # @param pid [Integer] the process it belongs to.
      # @return [void]
      def write(snapshot, pid: Process.pid)
        temporary = File.join(@path, ".#{pid}.json.tmp")
        File.write(temporary, JSON.generate(snapshot))
        File.rename(temporary, file_for(pid))
      end

      # @return [Array<Hash>] every worker's latest snapshot (files that vanish or are unreadable
      #   while being read are skipped).
      def snapshots
        Dir.glob(File.join(@path, "*.json")).filter_map { |file| read(file) }
      end

      # Writes `metrics`' snapshot every `interval` seconds until the calling thread or task stops.
      # Runs in an Async task (sleep yields to the reactor) or a plain Thread.
      # @param metrics [Metrics] this worker's registry.
      # @param interval [Float] seconds between writes.
      # @param times [Integer, nil] stop after this many writes (nil: forever).
      # @return [void]
      def publish(metrics, interval: 1.0, times: nil)
        count = 0
        loop do
          write(metrics.snapshot)
          break if times && (count += 1) >= times
          sleep(interval)
        end
      end

      # Deletes a dead worker's snapshot: its series end, and its replacement's (same worker
      # label) start again from zero, which Prometheus reads as a counter reset.
      # @param pid [Integer] the worker's pid.
      # @return [Boolean] whether it had published anything.
      def discard(pid)
        File.delete(file_for(pid))
        true
      rescue Errno::ENOENT
        false
      end

      # Removes the directory and everything in it (master shutdown).
      # @return [void]
      def remove
        FileUtils.rm_rf(@path)
      end

      private

      def file_for(pid)
        File.join(@path, "#{pid}.json")
      end

      def read(file)
        JSON.parse(File.read(file))
      rescue Errno::ENOENT, JSON::ParserError
        nil
      end
    end
  end
end
