# frozen_string_literal: true

module Heron
  module HTTP2
    # The HTTP/2 part of a request's Rack env: its header fields (RFC 9113 §8.3), refusing a
    # malformed request (missing or repeated pseudo-headers, a pseudo-header after a regular
    # field, upper-case or connection-specific fields). The connection's part (address, scheme,
    # server name, Heron's keys) is HTTP/1.1's, Request::EnvBuilder#complete.
    class EnvBuilder
      # Raised for a malformed request; the stream is reset with PROTOCOL_ERROR.
      class Malformed < StandardError; end

      # Raised for a :path that is not well-formed UTF-8 (overlong forms, surrogates, truncated
      # sequences, bytes F5-FF): answered 400, as the HTTP/1.1 parser answers such a target.
      class InvalidTarget < StandardError
        # @return [Integer] the HTTP status this maps to.
        def status = 400
      end

      CONNECTION_SPECIFIC = %w[connection keep-alive proxy-connection transfer-encoding upgrade].freeze
      PSEUDO = %w[:method :scheme :authority :path].freeze
      # Env keys of the field names seen, per process (three new strings per field per request
      # otherwise); bounded: emptied when full.
      KEYS = {} # rubocop:disable Style/MutableConstant -- the cache itself
      MAX_KEYS = 512
      private_constant :KEYS, :MAX_KEYS

      # @param common [Request::EnvBuilder] the connection's env builder.
      def initialize(common)
        @common = common
      end

      # @param fields [Array<Array(String, String)>]
      # @return [Hash] the env, for Request::EnvBuilder#complete.
      # @raise [Malformed]
      def build(fields)
        env = @common.fresh
        pseudo = pseudo_headers(fields)
        request_line(env, pseudo)
        fields.each { |name, value| add_field(env, name, value) unless name.start_with?(":") }
        env["HTTP_HOST"] ||= pseudo[":authority"] if pseudo[":authority"]
        env
      end

      private

      def pseudo_headers(fields)
        regular = false
        fields.each_with_object({}) do |(name, value), pseudo|
          next regular = true unless name.start_with?(":")
          raise Malformed, "pseudo-header #{name} after a regular field" if regular
          raise Malformed, "unknown or repeated pseudo-header #{name}" if !PSEUDO.include?(name) || pseudo.key?(name)
          pseudo[name] = value
        end
      end

      def request_line(env, pseudo)
        method, path = pseudo.values_at(":method", ":path")
        raise Malformed, "missing :method, :scheme or :path" unless method && pseudo[":scheme"] && path && !path.empty?
        path = target(path)
        env["REQUEST_METHOD"] = method
        env["SERVER_PROTOCOL"] = "HTTP/2"
        env["REQUEST_URI"] = path
        env["PATH_INFO"], env["QUERY_STRING"] = path.split("?", 2)
        env["QUERY_STRING"] ||= ""
        env["rack.hijack?"] = false
      end

      # The :path as HTTP/1.1's parser gives the target: well-formed UTF-8 or refused, and
      # binary when not ASCII (protocol-hpack tags every string UTF-8; Rack wants ASCII-8BIT).
      def target(path)
        return path if path.ascii_only?
        path = path.b
        raise InvalidTarget, "invalid UTF-8 in request target" unless path.dup.force_encoding(Encoding::UTF_8).valid_encoding?
        path
      end

      def add_field(env, name, value)
        return if name.include?("_") # as over HTTP/1.1: "x_forwarded_for" must not pass for "x-forwarded-for"
        value = value.b unless value.ascii_only?
        raise Malformed, "field name #{name.inspect} is not lower-case" if name.match?(/[A-Z]/)
        raise Malformed, "connection-specific field #{name}" if CONNECTION_SPECIFIC.include?(name)
        raise Malformed, "te other than trailers" if name == "te" && value != "trailers"
        key = key_for(name)
        env[key] = env.key?(key) ? join(name, env[key], value) : value
      end

      def key_for(name)
        return "CONTENT_TYPE" if name == "content-type"
        return "CONTENT_LENGTH" if name == "content-length"
        KEYS[name] || begin
          KEYS.clear if KEYS.size >= MAX_KEYS
          KEYS[name.dup.freeze] = "HTTP_#{name.upcase.tr('-', '_')}".freeze
        end
      end

      def join(name, first, value) = name == "cookie" ? "#{first}; #{value}" : "#{first}, #{value}"
    end
  end
end
