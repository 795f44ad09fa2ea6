# frozen_string_literal: true

require "erb"

module Heron
  module Profiler
    class Dashboard
      # Formatting shared by the dashboard's pages. Expects the including page to define
      # `@base` (the dashboard's URL) and `@token` (carried on in links, or nil).
      module Helpers
        # @param value [Object] anything.
        # @return [String] its text, HTML-escaped.
        def h(value)
          ERB::Util.html_escape(value.to_s)
        end

        # @param value [Numeric, nil] milliseconds.
        # @return [String] "12.3 ms" style text, "—" when unknown.
        def ms(value)
          return "—" if value.nil?
          value >= 100 ? "#{value.round} ms" : format("%.1f ms", value)
        end

        # @param warning [Hash] one of a record's N+1 findings.
        # @return [String] its badge text: "×12" (times its query ran), or "unused" for an
        #   association loaded up front and never read.
        def repeats(warning)
          warning[:kind].to_s == "unused_eager_loading" ? "unused" : "×#{count(warning[:count])}"
        end

        # @param value [Integer, nil] a count.
        # @return [String] the count with thousands separators, "—" when unknown.
        def count(value)
          value.nil? ? "—" : value.to_i.to_s.reverse.scan(/\d{1,3}/).join(",").reverse
        end

        # @param epoch [Float, nil] seconds since the epoch.
        # @return [String] the UTC time of day with milliseconds.
        def clock(epoch)
          epoch ? Time.at(epoch).utc.strftime("%H:%M:%S.%L") : "—"
        end

        # @param path [String] a dashboard-relative path such as "/requests/ab12".
        # @return [String] the escaped URL, carrying the token when one came in the query.
        def url(path)
          query = @token ? "?token=#{ERB::Util.url_encode(@token)}" : ""
          h("#{@base}#{path}#{query}")
        end

        # @param status [Integer, nil] an HTTP status.
        # @return [String] a CSS class for it.
        def status_class(status)
          "s#{status.to_i / 100}"
        end

        # @param record [Hash] a stored request.
        # @return [String] the request target: path plus "?query" when there is one.
        def target(record)
          query = record[:query].to_s
          query.empty? ? record[:path].to_s : "#{record[:path]}?#{query}"
        end

        # @param part [Numeric, nil] a duration.
        # @param whole [Numeric, nil] the total it is part of.
        # @return [String] a CSS width percentage, 0 to 100.
        def share(part, whole)
          return "0%" unless part && whole.to_f.positive?
          "#{(100.0 * part / whole).clamp(0, 100).round(1)}%"
        end
      end
    end
  end
end
