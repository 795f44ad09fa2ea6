# frozen_string_literal: true

require "erb"

module Heron
  module Profiler
    class Dashboard
      # The HTML shell every dashboard page shares: one self-contained document, inline CSS,
      # no scripts, no external assets.
      class Layout
        STYLE = <<~CSS
          :root { color-scheme: light; --ink: #1d2430; --muted: #667085; --line: #e4e7ec; --accent: #2f6fed; }
          * { box-sizing: border-box; }
          body { margin: 0; font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
                 color: var(--ink); background: #f7f8fa; }
          header { background: #16233a; color: #fff; padding: 12px 24px; display: flex; gap: 16px; align-items: baseline; }
          header a { color: #fff; text-decoration: none; font-weight: 600; font-size: 16px; }
          header span { color: #b6c2d9; font-size: 13px; }
          main { padding: 20px 24px 40px; }
          h1 { font-size: 18px; margin: 0 0 4px; word-break: break-all; }
          h2 { font-size: 15px; margin: 28px 0 8px; }
          p.hint { color: var(--muted); margin: 0 0 16px; }
          table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
          th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
          th { background: #f0f2f5; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: #475467; }
          td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
          tr:hover td { background: #f5f8ff; }
          a { color: var(--accent); }
          td.path { max-width: 420px; word-break: break-all; }
          code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
          pre { margin: 0; white-space: pre-wrap; word-break: break-word; }
          .badge { display: inline-block; padding: 1px 7px; border-radius: 10px; font-size: 11.5px; font-weight: 600; }
          .warn { background: #fff1e0; color: #b54708; border: 1px solid #f7c48b; }
          .ok { color: var(--muted); }
          .s2 { color: #067647; } .s3 { color: #175cd3; } .s4 { color: #b54708; } .s5 { color: #b42318; font-weight: 600; }
          dl { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 10px; margin: 16px 0; }
          dl div { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; }
          dt { color: var(--muted); font-size: 12px; } dd { margin: 0; font-size: 17px; font-weight: 600; }
          .bar { display: flex; height: 14px; border-radius: 4px; overflow: hidden; background: #e9edf5; max-width: 720px; }
          .bar i { display: block; } .q { background: #98a2b3; } .a { background: #2f6fed; } .d { background: #f79009; }
          .legend { color: var(--muted); font-size: 12px; margin: 6px 0 0; }
          .legend b { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin: 0 4px 0 10px; }
          .empty { background: #fff; border: 1px dashed var(--line); padding: 24px; text-align: center; color: var(--muted); }
        CSS

        TEMPLATE = <<~ERB
          <!DOCTYPE html>
          <html lang="en">
          <head>
          <meta charset="utf-8">
          <meta name="viewport" content="width=device-width, initial-scale=1">
          <title><%= ERB::Util.html_escape(title) %> · Heron profiler</title>
          <style>
          <%= style %></style>
          </head>
          <body>
          <header><a href="<%= home %>">Heron profiler</a><span><%= ERB::Util.html_escape(subtitle) %></span></header>
          <main>
          <%= body %></main>
          </body>
          </html>
        ERB

        ERB.new(TEMPLATE).def_method(self, "render(title, subtitle, home, body)")

        # @return [String] the page's CSS.
        def style
          STYLE
        end

        # @!method render(title, subtitle, home, body)
        #   @param title [String] the page title (plain text).
        #   @param subtitle [String] a line for the header (plain text).
        #   @param home [String] the escaped URL of the dashboard's front page.
        #   @param body [String] the page's HTML.
        #   @return [String] the whole document.
      end
    end
  end
end
