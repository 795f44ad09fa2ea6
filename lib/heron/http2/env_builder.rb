# frozen_string_literal: true

require_relative "request_fields"

module Heron
  module HTTP2
    # The HTTP/2 part of a request's Rack env: its header fields (RFC 9113 §8.3), by
    # RequestFields' rules (in C), refusing a malformed request (missing or repeated
    # pseudo-headers, a pseudo-header after a regular field, upper-case, non-token or
    # connection-specific fields). A request's block is read straight into its env
    # (#decode: Decoder#request); fields decoded the generic way go through #build. The
    # connection's part (address, scheme, server name, Heron's keys) is HTTP/1.1's,
    # Request::EnvBuilder#complete.
    class EnvBuilder
      # Raised for a malformed request; the stream is reset with PROTOCOL_ERROR.
      class Malformed < StandardError; end

      # Raised for a :path that is not well-formed UTF-8 (overlong forms, surrogates, truncated
      # sequences, bytes F5-FF): answered 400, as the HTTP/1.1 parser answers such a target.
      class InvalidTarget < StandardError
        # @return [Integer] the HTTP status this maps to.
        def status = 400
      end

      MUTABLE = %w[PATH_INFO QUERY_STRING].freeze # made anew for each request (#replay)
      # What every HTTP/2 request's env has, in the connection's template (copied, its keys are
      # not hashed again).
      PROTOCOL = { "SERVER_PROTOCOL" => "HTTP/2", "rack.hijack?" => false }.freeze
      private_constant :MUTABLE, :PROTOCOL

      # @param common [Request::EnvBuilder] the connection's env builder.
      def initialize(common)
        @common = common
        @template = common.fresh.merge!(PROTOCOL).freeze
        @fields = nil # the last frozen fields built, and what they added (#remember)
        @added = nil
      end

      # A request's header block read straight into a copy of the connection's template
      # (Decoder#request; a repeated block of indexed fields gives a copy of the last env).
      # @param decoder [Decoder] the connection's.
      # @param block [String] the request's whole header block.
      # @param table_size_limit [Integer] our SETTINGS_HEADER_TABLE_SIZE.
      # @param header_limit [Integer] max_header_bytes.
      # @return [Hash, Malformed, InvalidTarget] the env, or the stream error (for #env).
      # @raise [Protocol::HPACK::CompressionError, Protocol::HTTP2::ProtocolError] connection errors.
      def decode(decoder, block, table_size_limit, header_limit)
        decoder.request(block, table_size_limit, header_limit, @template)
      end

      # The env of a stream's request head (Stream#request_headers): the one #decode filled, or
      # one built from decoded fields.
      # @param head [Hash, Array<Array(String, String)>, Malformed, InvalidTarget]
      # @return [Hash]
      # @raise [Malformed, InvalidTarget]
      def env(head)
        return head if head.is_a?(Hash)
        raise head if head.is_a?(Exception)
        build(head)
      end

      # The env of decoded fields, the pseudo-headers first, then the regular fields.
      # @param fields [Array<Array(String, String)>]
      # @return [Hash] the env, for Request::EnvBuilder#complete.
      # @raise [Malformed, InvalidTarget]
      def build(fields)
        return replay if fields.equal?(@fields)
        env = {}
        error = RequestFields.fill(env, fields) and raise error
        remember(fields, env) if fields.frozen?
        @template.merge.merge!(env)
      end

      private

      # The same frozen fields again (HTTP2::Decoder hands out the last block's when a client
      # repeats it): what they added to the env last time, checked then, is added again, with a
      # PATH_INFO and QUERY_STRING of the request's own (the app's to change).
      def replay
        env = @template.merge.merge!(@added)
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
    end
  end
end
