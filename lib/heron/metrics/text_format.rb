# frozen_string_literal: true

require_relative "../version"

module Heron
  class Metrics
    # Writes {Metrics#snapshot}s in the Prometheus text exposition format, version 0.0.4: a
    # HELP and a TYPE line per metric family, then one sample per line, "\n" line endings.
    #
    # One snapshot (a single process) gives unlabelled series. A cluster gives one snapshot
    # per process, each with its labels (`worker="0"`, ..., `worker="master"`), so every
    # family has one series per process and `sum without (worker)` totals them; a worker that
    # is replaced starts its series again from zero, which Prometheus' rate() reads as the
    # counter reset it is. Names follow Prometheus' conventions (checked with
    # `promtool check metrics` in the tests): base units, `_total` on counters, the standard
    # `process_*` names for resource use, and `heron_build_info` for the version.
    class TextFormat
      CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

      SIMPLE = [
        ["heron_connections_total", "counter", "Client connections accepted.", "counters", "connections_total"],
        ["heron_connections_open", "gauge", "Client connections open now.", "gauges", "connections_open"],
        ["heron_requests_in_flight", "gauge", "Requests being handled now.", "gauges", "requests_in_flight"],
        ["heron_after_reply_backlog", "gauge", "after_reply callbacks queued or running.", "gauges",
         "after_reply_backlog"],
        ["heron_after_reply_total", "counter", "after_reply callbacks finished.", "counters", "after_reply_total"],
        ["heron_worker_restarts_total", "counter", "Workers the cluster master replaced.", "counters",
         "worker_restarts_total"],
        ["heron_gc_count_total", "counter", "Ruby GC runs (GC.stat count).", "gc", "count"],
        ["heron_gc_major_count_total", "counter", "Ruby major GC runs (GC.stat major_gc_count).", "gc", "major"],
        ["heron_gc_minor_count_total", "counter", "Ruby minor GC runs (GC.stat minor_gc_count).", "gc", "minor"],
      ].freeze

      PROCESS = [
        ["process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.", "cpu_seconds"],
        ["process_resident_memory_bytes", "gauge", "Resident memory size, in bytes.", "resident_memory_bytes"],
        ["process_open_fds", "gauge", "Open file descriptors.", "open_fds"],
        ["process_max_fds", "gauge", "Limit on open file descriptors.", "max_fds"],
        ["process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.",
         "start_time_seconds"],
      ].freeze

      # @param sources [Hash, Array<Array(Hash, Hash)>] one {Metrics#snapshot}, or pairs of
      #   labels (e.g. `{ worker: "0" }`) and the snapshot of the process they name.
      def initialize(sources)
        @sources = sources.is_a?(Hash) ? [[{}, sources]] : sources
        @out = +""
      end

      # @return [String] the whole exposition, ending in a line feed.
      def render
        build_info
        requests
        queue
        SIMPLE.each { |name, type, help, group, key| each_family(name, type, help) { |snapshot| snapshot[group][key] } }
        PROCESS.each { |name, type, help, key| each_family(name, type, help) { |snapshot| snapshot.fetch("process", {})[key] } }
        family("heron_processes", "gauge", "Processes whose counts are included.") do
          sample("heron_processes", @sources.sum { |_labels, snapshot| snapshot["processes"] })
        end
        @out
      end

      private

      def build_info
        family("heron_build_info", "gauge", "Always 1; the labels say which Heron, Ruby and async this is.") do
          sample("heron_build_info", 1, version: VERSION, ruby_version: RUBY_VERSION,
                                        async_version: Gem.loaded_specs["async"]&.version.to_s)
        end
      end

      def requests
        family("heron_requests_total", "counter", "Requests answered, by status class.") do
          each_source do |labels, snapshot|
            snapshot["requests"].sort.each { |status, count| sample("heron_requests_total", count, **labels, status: status) }
          end
        end
        family("heron_request_duration_seconds", "histogram",
               "Time from the first request byte to the last response byte, by status class.") do
          each_source do |labels, snapshot|
            snapshot["latency"].sort.each do |status, histogram|
              histogram_samples("heron_request_duration_seconds", Histogram.from_h(histogram), **labels, status: status)
            end
          end
        end
      end

      def queue
        family("heron_request_queue_seconds", "histogram",
               "Time a request waited before the app was called (when known).") do
          each_source { |labels, snapshot| histogram_samples("heron_request_queue_seconds", Histogram.from_h(snapshot["queue"]), **labels) }
        end
      end

      # A family with one sample per source, the value the block picks (none when it is nil).
      def each_family(name, type, help)
        family(name, type, help) do
          each_source do |labels, snapshot|
            value = yield(snapshot)
            sample(name, value, **labels) unless value.nil?
          end
        end
      end

      def each_source(&block)
        @sources.each { |labels, snapshot| block.call(labels, snapshot) }
      end

      def family(name, type, help)
        @out << "# HELP #{name} #{help}\n# TYPE #{name} #{type}\n"
        yield
      end

      def histogram_samples(name, histogram, **labels)
        histogram.cumulative.each { |le, count| sample("#{name}_bucket", count, **labels, le: le) }
        sample("#{name}_sum", histogram.sum, **labels)
        sample("#{name}_count", histogram.count, **labels)
      end

      def sample(name, value, **labels)
        @out << name << label_text(labels) << " " << Metrics.format_number(value) << "\n"
      end

      def label_text(labels)
        return "" if labels.empty?
        pairs = labels.map { |key, value| %(#{key}="#{escape(value.to_s)}") }
        "{#{pairs.join(',')}}"
      end

      def escape(value)
        value.gsub("\\", "\\\\\\\\").gsub("\n", "\\n").gsub('"', '\\"')
      end
    end
  end
end
