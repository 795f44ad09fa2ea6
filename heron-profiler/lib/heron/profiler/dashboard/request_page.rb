# frozen_string_literal: true

require "erb"
require_relative "page"

module Heron
  module Profiler
    class Dashboard
      # One request in detail: its timings, N+1 warnings, the queries grouped by shape, and every
      # SQL statement in order with its duration and call site.
      class RequestPage < Page
        LISTED = 500
        SHAPES = 100

        TEMPLATE = <<~'ERB'
          <p class="hint"><a href="<%= url('') %>">← all requests</a> · <a href="<%= url("/requests/#{ERB::Util.url_encode(record[:id])}.json") %>">JSON</a></p>
          <h1><%= h record[:method] %> <%= h target(record) %></h1>
          <p class="hint">Started <%= clock(record[:started_at]) %> UTC · request <code><%= h record[:id] %></code><% if record[:method] == "GET" -%> · run it again under stackprof: <a href="<%= tool_url('flamegraph') %>">flamegraph</a> (<a href="<%= tool_url('flamegraph', 'format=speedscope') %>">speedscope JSON</a>), or <a href="<%= tool_url('memory') %>">memory profile</a><% end -%></p>
          <dl>
          <% cards.each do |label, value, css| -%>
          <div><dt><%= label %></dt><dd class="<%= css %>"><%= h value %></dd></div>
          <% end -%>
          </dl>
          <div class="bar" title="queue / app outside the database / database">
          <i class="q" style="width: <%= share(record[:queue_ms], record[:total_ms]) %>"></i><i class="a" style="width: <%= share(app_outside_db, record[:total_ms]) %>"></i><i class="d" style="width: <%= share(record[:db_ms], record[:total_ms]) %>"></i>
          </div>
          <p class="legend"><b class="q"></b>queue <b class="a"></b>app outside the database <b class="d"></b>database</p>
          <% unless steps.empty? -%>
          <h2>Steps (<%= steps.size %>)</h2>
          <table>
          <thead><tr><th>Step</th><th class="num">Runs</th><th class="num">Total</th></tr></thead>
          <tbody>
          <% steps.each do |s| -%>
          <tr><td><code><%= h s[:name] %></code></td><td class="num"><%= count s[:count] %></td><td class="num"><%= ms s[:ms] %></td></tr>
          <% end -%>
          </tbody>
          </table>
          <% end -%>
          <h2>N+1 warnings (<%= warnings.size %>)</h2>
          <% if warnings.empty? -%>
          <p class="hint">None: no query shape repeated from one call site, no eager loading left unread.</p>
          <% else -%>
          <table>
          <thead><tr><th class="num">Count</th><th>Call site</th><th>Advice</th><th>Query</th></tr></thead>
          <tbody>
          <% warnings.each do |w| -%>
          <tr><td class="num"><span class="badge warn"><%= repeats w %></span></td><td><code><%= h w[:call_site] %></code></td><td><% if w[:advice] -%><code><%= h w[:advice] %></code><% else -%><span class="hint">—</span><% end -%></td><td><pre><%= h(w[:normalized] || "eager loading of #{count w[:count]} records, never read") %></pre></td></tr>
          <% end -%>
          </tbody>
          </table>
          <% end -%>
          <h2>Queries by shape</h2>
          <% if stored_only? -%>
          <p class="hint">Counted over all <%= count total_queries %> queries<%= ", the #{self.class::SHAPES} costliest shapes shown" if shapes.size >= self.class::SHAPES %>.</p>
          <% end -%>
          <% if queries.empty? -%>
          <p class="hint">This request ran no SQL.</p>
          <% else -%>
          <table>
          <thead><tr><th class="num">Runs</th><th class="num">Total</th><th>Query</th></tr></thead>
          <tbody>
          <% shapes.each do |normalized, runs, total| -%>
          <tr><td class="num"><%= count runs %></td><td class="num"><%= ms total %></td><td><pre><%= h normalized %></pre></td></tr>
          <% end -%>
          </tbody>
          </table>
          <h2><%= queries_heading %></h2>
          <table>
          <thead><tr><th class="num">#</th><th class="num">Duration</th><th>SQL</th><th>Call site</th></tr></thead>
          <tbody>
          <% queries.first(self.class::LISTED).each_with_index do |q, i| -%>
          <tr><td class="num"><%= i + 1 %></td><td class="num"><%= ms q[:duration_ms] %></td><td><pre><%= h q[:sql] %></pre></td><td><% if q[:backtrace] -%><details><summary><code><%= h q[:call_site] %></code></summary><pre><%= h Array(q[:backtrace]).drop(1).join("\n") %></pre></details><% else -%><code><%= h q[:call_site] %></code><% end -%><br><span class="hint"><%= h q[:adapter] %></span></td></tr>
          <% end -%>
          </tbody>
          </table>
          <% if queries.size > self.class::LISTED -%>
          <p class="hint">The first <%= self.class::LISTED %> are listed; the JSON view has <%= stored_only? ? "the #{count queries.size} stored" : "all #{count queries.size}" %>.</p>
          <% end -%>
          <% end -%>
        ERB

        template TEMPLATE

        # @return [String] the page title.
        def title
          "#{record[:method]} #{record[:path]}"
        end

        private

        # @return [Hash] the stored request (symbol keys).
        def record
          @subject
        end

        # The request's own URL asking for a profiling tool (`__heron=NAME`), carrying the token.
        def tool_url(name, *extra)
          params = ["__heron=#{name}", *extra]
          params << "token=#{ERB::Util.url_encode(@token)}" if @token
          h("#{target(record)}#{record[:query].to_s.empty? ? '?' : '&'}#{params.join('&')}")
        end

        def cards
          [["Status", record[:status], status_class(record[:status])], ["Total", ms(record[:total_ms])],
           ["Queue", ms(record[:queue_ms])], ["App", ms(record[:app_ms])], ["Database", ms(record[:db_ms])],
           ["Queries", count(record[:db_count])], ["Reactor", ms(record[:reactor_ms])], ["CPU", ms(record[:cpu_ms])], ["Allocations", count(record[:allocations])],
           ["GC runs", count(record[:gc_count])], ["After reply", record[:after_reply_ms] ? ms(record[:after_reply_ms]) : "pending"]]
        end

        def app_outside_db
          record[:app_ms] && [record[:app_ms] - record[:db_ms].to_f, 0].max
        end

        def warnings
          Array(record[:n_plus_one])
        end

        def queries
          Array(record[:queries])
        end

        def steps
          Array(record[:steps])
        end

        def total_queries
          [record[:db_count].to_i, queries.size].max
        end

        # Whether the record keeps fewer statements than the request ran.
        def stored_only?
          total_queries > queries.size
        end

        def queries_heading
          return "All #{count(queries.size)} queries, in order" unless stored_only?
          "#{count(total_queries)} queries, first #{count(queries.size)} stored, in order"
        end

        def shapes
          return record[:shapes].map { |row| [row[:normalized], row[:count], row[:ms]] } if record[:shapes]
          groups = queries.group_by { |query| query[:normalized] || query[:sql] }
          rows = groups.map { |shape, list| [shape, list.size, list.sum { |query| query[:duration_ms].to_f }] }
          rows.sort_by { |_, runs, total| [-total, -runs] }
        end
      end
    end
  end
end
