# frozen_string_literal: true

module Heron
  module Profiler
    class Metrics
      # Writes a {Metrics#snapshot} in the Prometheus text exposition format, version 0.0.4:
      # a HELP and a TYPE line per metric family, then one sample per line, "\n" line endings.
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

        # @param snapshot [Hash] a {Metrics#snapshot}.
        def initialize(snapshot)
          @snapshot = snapshot
          @out = +""
        end

        # @return [String] the whole exposition, ending in a line feed.
        def render
          requests
          queue
          SIMPLE.each { |name, type, help, group, key| family(name, type, help) { sample(name, @snapshot[group][key]) } }
          family("heron_processes", "gauge", "Processes whose counts are included.") do
            sample("heron_processes", @snapshot["processes"])
          end
          @out
        end

        private

        def requests
          family("heron_requests_total", "counter", "Requests answered, by status class.") do
            @snapshot["requests"].sort.each { |status, count| sample("heron_requests_total", count, status: status) }
          end
          family("heron_request_duration_seconds", "histogram",
                 "Time from the first request byte to the last response byte, by status class.") do
            @snapshot["latency"].sort.each do |status, histogram|
              histogram_samples("heron_request_duration_seconds", Histogram.from_h(histogram), status: status)
            end
          end
        end

        def queue
          family("heron_request_queue_seconds", "histogram",
                 "Time a request waited before the app was called (when known).") do
            histogram_samples("heron_request_queue_seconds", Histogram.from_h(@snapshot["queue"]))
          end
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
end
