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
      PSEUDO = { ":method" => 0, ":scheme" => 1, ":authority" => 2, ":path" => 3 }.freeze
      SPECIAL = { "content-type" => "CONTENT_TYPE", "content-length" => "CONTENT_LENGTH" }.freeze
      # Env keys of the field names seen, per process (three new strings per field per request
      # otherwise); a name is here only once it passed the checks (#key_for). Bounded: emptied
      # when full.
      KEYS = {} # rubocop:disable Style/MutableConstant -- the cache itself
      MAX_KEYS = 512
      MUTABLE = %w[PATH_INFO QUERY_STRING].freeze # made anew for each request (#replay)
      private_constant :PSEUDO, :SPECIAL, :KEYS, :MAX_KEYS, :MUTABLE

      # @param common [Request::EnvBuilder] the connection's env builder.
      def initialize(common)
        @common = common
        @fields = nil # the last frozen fields built, and what they added (#remember)
        @added = nil
      end

      # Reads the fields in one pass: the pseudo-headers, which must all come first, then the
      # regular fields.
      # @param fields [Array<Array(String, String)>]
      # @return [Hash] the env, for Request::EnvBuilder#complete.
      # @raise [Malformed]
      def build(fields)
        return replay if fields.equal?(@fields)
        env = {}
        pseudo = [nil, nil, nil, nil] # :method, :scheme, :authority, :path
        regular = false
        fields.each do |name, value|
          next regular = add_field(env, name, value) unless name.start_with?(":")
          raise Malformed, "pseudo-header #{name} after a regular field" if regular
          index = PSEUDO[name]
          raise Malformed, "unknown or repeated pseudo-header #{name}" if index.nil? || pseudo[index]
          pseudo[index] = value
        end
        request_line(env, pseudo)
        env["HTTP_HOST"] ||= pseudo[2] if pseudo[2]
        remember(fields, env) if fields.frozen?
        @common.fresh.merge!(env)
      end

      private

      # The same frozen fields again (HTTP2::Decoder hands out the last block's when a client
      # repeats it): what they added to the env last time, checked then, is added again, with a
      # PATH_INFO and QUERY_STRING of the request's own (the app's to change).
      def replay
        env = @common.fresh.merge!(@added)
        env["PATH_INFO"] = env["PATH_INFO"].dup
        env["QUERY_STRING"] = env["QUERY_STRING"].dup
        env
      end

      # Keeps what frozen fields added, when every value but those two is frozen (shared by
      # the requests that replay it); a non-ASCII value's binary copy is not, and is made anew.
      def remember(fields, env)
        @fields = nil
        return unless env.all? { |key, value| value.frozen? || MUTABLE.include?(key) }
        added = env.dup # this request's PATH_INFO and QUERY_STRING stay its own
        MUTABLE.each { |key| added[key] = added[key].dup.freeze }
        @added = added.freeze
        @fields = fields
      end

      def request_line(env, (method, scheme, _, path))
        raise Malformed, "missing :method, :scheme or :path" unless method && scheme && path && !path.empty?
        path = target(path)
        env["REQUEST_METHOD"] = method
        env["SERVER_PROTOCOL"] = "HTTP/2"
        env["REQUEST_URI"] = path
        query = path.index("?")
        env["PATH_INFO"] = query ? path.byteslice(0, query) : path.dup
        env["QUERY_STRING"] = query ? path.byteslice(query + 1, path.bytesize) : +""
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

      # @return [true] (a regular field came)
      def add_field(env, name, value)
        key = key_for(name) or return true
        raise Malformed, "te other than trailers" if name == "te" && value != "trailers"
        value = value.b unless value.ascii_only?
        env[key] = env.key?(key) ? join(name, env[key], value) : value
        true
      end

      # The field's env key, its name checked once per process; nil for a name with "_" (as over
      # HTTP/1.1: "x_forwarded_for" must not pass for "x-forwarded-for").
      def key_for(name)
        KEYS[name] || begin
          return if name.include?("_")
          raise Malformed, "field name #{name.inspect} is not lower-case" if name.match?(/[A-Z]/)
          raise Malformed, "connection-specific field #{name}" if CONNECTION_SPECIFIC.include?(name)
          KEYS.clear if KEYS.size >= MAX_KEYS
          KEYS[name.dup.freeze] = SPECIAL[name] || "HTTP_#{name.upcase.tr('-', '_')}".freeze
        end
      end

      def join(name, first, value) = name == "cookie" ? "#{first}; #{value}" : "#{first}, #{value}"
    end
  end
end
