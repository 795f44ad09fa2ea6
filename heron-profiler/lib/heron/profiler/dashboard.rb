# frozen_string_literal: true

require "json"
require_relative "dashboard/access_control"
require_relative "dashboard/layout"
require_relative "dashboard/index_page"
require_relative "dashboard/request_page"

module Heron
  module Profiler
    # The profiler's own Rack app, mounted at `config.profile_path` (default "/__heron"):
    #
    #   GET /__heron                    per-route figures and recent requests (HTML)
    #   GET /__heron.json               the same as JSON
    #   GET /__heron/requests/ID        one request: timings, N+1 warnings, SQL (HTML)
    #   GET /__heron/requests/ID.json   the same as JSON
    #
    # HTML routes answer JSON instead when the client sends `Accept: application/json`. Requests
    # that {Dashboard::AccessControl} refuses, and unknown paths, get a plain 404.
    class Dashboard
      DEFAULT_LIMIT = 200
      HTML_HEADERS = {
        "content-type" => "text/html; charset=utf-8",
        "content-security-policy" => "default-src 'none'; style-src 'unsafe-inline'",
      }.freeze
      COMMON_HEADERS = {
        "cache-control" => "no-store", "x-content-type-options" => "nosniff", "referrer-policy" => "no-referrer",
      }.freeze

      # @param store [#recent, #find, nil] the profiler's store (nil shows an empty dashboard).
      # @param config [Heron::Configuration] reads `profile_path`, `profile_token`, `environment_name`.
      def initialize(store, config)
        @store = store
        @config = config
        @access = AccessControl.new(config)
      end

      # @param env [Hash] the Rack env; PATH_INFO starts with `config.profile_path`.
      # @return [Array(Integer, Hash, Array<String>)] the Rack response.
      def call(env)
        return @access.not_found unless @access.allowed?(env)
        return method_not_allowed unless %w[GET HEAD].include?(env["REQUEST_METHOD"])
        response = route(env)
        env["REQUEST_METHOD"] == "HEAD" ? [response[0], response[1], []] : response
      end

      private

      def route(env)
        path = env["PATH_INFO"].to_s.delete_prefix(@config.profile_path)
        json = path.end_with?(".json") || wants_json?(env)
        case path.delete_suffix(".json")
        when "", "/" then index(env, json)
        when %r{\A/requests/([^/]+)\z} then request(Rack::Utils.unescape_path(Regexp.last_match(1)), env, json)
        else @access.not_found
        end
      end

      def index(env, json)
        records = recent(limit(env))
        routes = symbolize(@store.respond_to?(:routes) ? @store.routes : [])
        return json_response("requests" => records.map { |record| summary(record, env) }, "routes" => routes) if json
        html_response(IndexPage.new(records, base(env), @access.query_token(env), routes))
      end

      def request(id, env, json)
        record = @store&.find(id)
        return @access.not_found unless record
        record = symbolize(record)
        return json_response("request" => record) if json
        html_response(RequestPage.new(record, base(env), @access.query_token(env)))
      end

      def recent(limit)
        Array(@store&.recent(limit)).first(limit).map { |record| symbolize(record) }
      end

      def summary(record, env)
        record.reject { |key, _| key == :queries }.merge(url: "#{base(env)}/requests/#{ERB::Util.url_encode(record[:id])}")
      end

      def limit(env)
        requested = Rack::Utils.parse_query(env["QUERY_STRING"].to_s)["limit"].to_i
        requested.positive? ? requested : DEFAULT_LIMIT
      rescue StandardError
        DEFAULT_LIMIT
      end

      def wants_json?(env)
        env["HTTP_ACCEPT"].to_s.include?("application/json")
      end

      def base(env)
        "#{env['SCRIPT_NAME']}#{@config.profile_path}"
      end

      def html_response(page)
        subtitle = "#{@config.environment_name} · pid #{Process.pid}"
        html = Layout.new.render(page.title, subtitle, page.url(""), page.render)
        respond(HTML_HEADERS, html)
      end

      def json_response(data)
        respond({ "content-type" => "application/json" }, JSON.generate(data))
      end

      def method_not_allowed
        respond({ "content-type" => "text/plain", "allow" => "GET, HEAD" }, "Method Not Allowed\n", 405)
      end

      def respond(headers, body, status = 200)
        [status, headers.merge(COMMON_HEADERS, "content-length" => body.bytesize.to_s), [body]]
      end

      def symbolize(value)
        case value
        when Hash then value.to_h { |key, item| [key.to_sym, symbolize(item)] }
        when Array then value.map { |item| symbolize(item) }
        else value
        end
      end
    end
  end
end
