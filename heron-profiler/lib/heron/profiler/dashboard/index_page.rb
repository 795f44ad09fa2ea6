# frozen_string_literal: true

require "erb"
require_relative "page"

module Heron
  module Profiler
    class Dashboard
      # The front page: per-route figures with each route's slowest requests, then a table of
      # the most recent requests, newest first, each linking to its {RequestPage}.
      class IndexPage < Page
        TEMPLATE = <<~'ERB'
          <% unless routes.empty? -%>
          <h1>Routes</h1>
          <p class="hint"><%= routes.size %> routes since the server started, busiest first; times are total request times (p50/p95 over each process's last 1,000)</p>
          <table>
          <thead><tr><th>Route</th><th class="num">Requests</th><th class="num">p50</th><th class="num">p95</th><th class="num">Max</th><th class="num">Queries (mean)</th><th>Slowest</th></tr></thead>
          <tbody>
          <% routes.each do |r| -%>
          <tr>
          <td class="path"><%= h r[:route] %></td>
          <td class="num"><%= count r[:count] %></td>
          <td class="num"><%= ms r[:p50_ms] %></td>
          <td class="num"><%= ms r[:p95_ms] %></td>
          <td class="num"><%= ms r[:max_ms] %></td>
          <td class="num"><%= format('%.1f', r[:mean_queries].to_f) %></td>
          <td><% Array(r[:slowest]).each do |s| %><a href="<%= url("/requests/#{ERB::Util.url_encode(s[:id])}") %>"><%= ms s[:total_ms] %></a> <% end %></td>
          </tr>
          <% end -%>
          </tbody>
          </table>
          <% end -%>
          <h1>Recent requests</h1>
          <p class="hint"><%= records.size %> shown, newest first · <a href="<%= url('') %>">refresh</a> · <a href="<%= url('.json') %>">JSON</a></p>
          <% if records.empty? -%>
          <div class="empty">No requests recorded yet. Make a request to the app, then refresh this page.</div>
          <% else -%>
          <table>
          <thead><tr><th>Time (UTC)</th><th>Method</th><th>Path</th><th class="num">Status</th><th class="num">Total</th><th class="num">App</th><th class="num">Queue</th><th class="num">DB</th><th class="num">Allocations</th><th class="num">Reactor</th><th>N+1</th></tr></thead>
          <tbody>
          <% records.each do |r| -%>
          <tr>
          <td class="num"><a href="<%= url("/requests/#{ERB::Util.url_encode(r[:id])}") %>"><%= clock(r[:started_at]) %></a></td>
          <td><%= h r[:method] %></td>
          <td class="path"><a href="<%= url("/requests/#{ERB::Util.url_encode(r[:id])}") %>"><%= h target(r) %></a></td>
          <td class="num <%= status_class(r[:status]) %>"><%= h r[:status] %></td>
          <td class="num"><%= ms r[:total_ms] %></td>
          <td class="num"><%= ms r[:app_ms] %></td>
          <td class="num"><%= ms r[:queue_ms] %></td>
          <td class="num"><%= ms r[:db_ms] %> / <%= count r[:db_count] %></td>
          <td class="num"><%= count r[:allocations] %></td>
          <td class="num"><%= ms r[:reactor_ms] %></td>
          <td><%= badge(r) %></td>
          </tr>
          <% end -%>
          </tbody>
          </table>
          <% end -%>
        ERB

        template TEMPLATE

        # @param records [Array<Hash>] recent records (symbol keys), newest first.
        # @param base [String] the dashboard's URL.
        # @param token [String, nil] a token to carry on in links.
        # @param routes [Array<Hash>] per-route rows (see {RouteStats.merge}, symbol keys).
        def initialize(records, base, token, routes = [])
          super(records, base, token)
          @routes = routes
        end

        # @return [String] the page title.
        def title
          "Recent requests"
        end

        private

        # @return [Array<Hash>] stored requests (symbol keys), newest first.
        def records
          @subject
        end

        # @return [Array<Hash>] per-route rows, busiest first.
        attr_reader :routes

        # One "×COUNT" per N+1 finding, the count being how many times its query ran (as on
        # the request page and in the log), "unused" per eager load never read; the advice,
        # when known, in the tooltip.
        def badge(record)
          warnings = Array(record[:n_plus_one])
          return %(<span class="ok">—</span>) if warnings.empty?
          shown = warnings.first(3).map { |warning| repeats(warning) }.join(" ")
          shown += " …" if warnings.size > 3
          %(<span class="badge warn" title="#{h tooltip(warnings)}">N+1 #{shown}</span>)
        end

        def tooltip(warnings)
          warnings.map { |w| "#{repeats(w)} at #{w[:call_site]}#{w[:advice] ? ": #{w[:advice]}" : ''}" }.join("\n")
        end
      end
    end
  end
end
