# frozen_string_literal: true

require "erb"

module Heron
  module Profiler
    class Flamegraph
      # The kept samples as a self-contained HTML page: a flame graph drawn as inline SVG (root
      # at the bottom, each frame as wide as its share of the samples, a tooltip with its file,
      # line and count), no script and nothing fetched from anywhere.
      class HtmlPage
        WIDTH = 1200.0
        ROW = 17
        NARROWEST = 0.5 # px; narrower frames are left out (their samples still count in the parent)
        CHAR = 7.0 # px per character of the labels
        STYLE = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}svg text{font:11px monospace;" \
                "pointer-events:none}p.note{background:#fff6d5;padding:.5em}code{background:#f3f3f3}"

        # @param samples [Samples] the request's own samples.
        # @param summary [Hash] :title (e.g. "GET /users -> 200"), :cpu_ms, :allocations,
        #   :speedscope (the JSON's URL).
        def initialize(samples, summary)
          @samples = samples
          @summary = summary
          @root = [0, {}]
          samples.stacks.each { |stack, count| add(stack, count) }
        end

        # @return [String] the whole HTML document.
        def render
          "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Flamegraph: #{h @summary[:title]}</title>" \
            "<style>#{STYLE}</style></head><body>\n<h1>Flamegraph: #{h @summary[:title]}</h1>\n#{counts}\n#{graph}\n</body></html>\n"
        end

        private

        def add(stack, count)
          @root[0] += count
          stack.reduce(@root) do |node, id|
            child = (node[1][id] ||= [0, {}])
            child[0] += count
            child
          end
        end

        def counts
          kept = @samples.kept
          "<p>#{kept} samples of this request's own code (one every #{@samples.interval} µs of wall time, " \
            "taken only while its fibers ran); CPU #{format('%.1f', @summary[:cpu_ms].to_f)} ms, " \
            "#{@summary[:allocations].to_i} objects allocated. <a href=\"#{h @summary[:speedscope]}\">speedscope JSON</a></p>\n" \
            "<p class=\"note\">#{@samples.foreign} samples were taken while other fibers (other requests, " \
            "the event loop) ran, and are left out.</p>"
        end

        def graph
          return "<p>No sample fell in this request's own running time.</p>" if @root[0].zero?
          height = depth(@root) * ROW
          out = +"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"#{WIDTH.to_i}\" height=\"#{height}\">"
          draw(out, @root[1], 0.0, height - ROW, WIDTH / @root[0])
          out << "</svg>"
        end

        def depth(node)
          node[1].empty? ? 0 : 1 + node[1].values.map { |child| depth(child) }.max
        end

        def draw(out, children, x, y, scale)
          children.sort_by { |id, _| @samples.frame(id)[:name] }.each do |id, (count, grandchildren)|
            width = count * scale
            next x += width if width < NARROWEST
            out << box(@samples.frame(id), count, x, y, width)
            draw(out, grandchildren, x, y - ROW, scale)
            x += width
          end
        end

        def box(frame, count, x, y, width)
          name = frame[:name]
          where = frame[:file] ? " #{frame[:file]}:#{frame[:line]}" : ""
          share = format("%.1f", 100.0 * count / @root[0])
          label = width > 3 * CHAR ? %(<text x="#{(x + 3).round(1)}" y="#{y + 12}">#{h fit(name, width)}</text>) : ""
          %(<g><title>#{h name}#{h where} — #{count} samples, #{share}%</title><rect x="#{x.round(1)}" y="#{y}" ) +
            %(width="#{(width - 0.5).round(1)}" height="#{ROW - 1}" fill="#{color(name)}"/>#{label}</g>)
        end

        def fit(name, width)
          chars = ((width - 6) / CHAR).floor
          name.size <= chars ? name : "#{name[0, [chars - 1, 0].max]}…"
        end

        def color(name)
          hash = name.sum
          "rgb(#{205 + (hash % 50)},#{80 + (hash * 7 % 120)},#{40 + (hash * 13 % 50)})"
        end

        def h(text)
          ERB::Util.html_escape(text.to_s)
        end
      end
    end
  end
end
