# frozen_string_literal: true

require "digest/sha1"
require_relative "../response/head"

module Heron
  module Upgrade
    # Which requests `rack.upgrade` may take (`env["rack.upgrade?"]`), and the response head
    # that switches them: 101 with Sec-WebSocket-Accept for a WebSocket (RFC 6455 section 4.2),
    # 200 `text/event-stream` for an EventSource.
    module Handshake
      GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
      # Headers of the app's response that do not belong on a switched connection.
      DROPPED = %w[content-length transfer-encoding connection upgrade].freeze
      # Env keys that mean nothing once the request is over: they are left out of the env an
      # upgraded connection keeps (`client.env`).
      OVER = %w[rack.input rack.hijack rack.hijack? rack.after_reply rack.response_finished rack.early_hints
                heron.request_start].freeze
      private_constant :GUID, :DROPPED, :OVER

      # @param env [Hash]
      # @return [Symbol, nil] :websocket for a valid WebSocket handshake, :sse for a GET that
      #   accepts `text/event-stream`, else nil. Asked of every request: the headers first, so a
      #   request with neither costs two lookups and no String comparison.
      def self.kind(env)
        upgrade = env["HTTP_UPGRADE"]
        return nil unless (upgrade || env["HTTP_ACCEPT"]&.include?("text/event-stream")) && env["REQUEST_METHOD"] == "GET"
        return :sse unless upgrade
        websocket?(env, upgrade) ? :websocket : nil
      end

      # @return [Boolean] whether the request is a WebSocket opening handshake Heron can answer.
      def self.websocket?(env, upgrade)
        upgrade.casecmp?("websocket") && env["HTTP_CONNECTION"].to_s.downcase.include?("upgrade") &&
          env["HTTP_SEC_WEBSOCKET_VERSION"] == "13" && key?(env["HTTP_SEC_WEBSOCKET_KEY"])
      end

      # A key is 16 random bytes, base64 (24 characters).
      def self.key?(key) = key.is_a?(String) && key.bytesize == 24 && key.unpack1("m").bytesize == 16

      # @param key [String] the client's Sec-WebSocket-Key.
      # @return [String] the Sec-WebSocket-Accept value.
      def self.accept(key) = [Digest::SHA1.digest(key + GUID)].pack("m0")

      # The env an upgraded connection keeps for its life, made anew without the keys that
      # served the request only: the request's env has room for any request (a 64-entry table,
      # 1.8 KiB), this one for what it holds (about 0.9 KiB less per idle WebSocket).
      # @param env [Hash]
      # @return [Hash]
      def self.lasting_env(env)
        lasting = {} # Hash#reject would copy the whole table (its room included), then delete
        env.each { |key, value| lasting[key] = value unless OVER.include?(key) }
        lasting
      end

      # @param kind [Symbol] :websocket or :sse.
      # @param env [Hash]
      # @param headers [Hash] the app's headers, normalized (lower-case names).
      # @param date [String] the date line.
      # @return [String] the response head.
      def self.head(kind, env, headers, date)
        headers = headers.reject { |name, _| DROPPED.include?(name) || name.start_with?("rack.") }
        return sse_head(headers, date) if kind == :sse
        headers["upgrade"] = "websocket"
        headers["sec-websocket-accept"] = accept(env["HTTP_SEC_WEBSOCKET_KEY"])
        Response::Head.build(101, headers, "", date, "connection: upgrade\r\n")
      end

      # The events follow until the server closes the connection (no length, no chunks).
      def self.sse_head(headers, date)
        headers["content-type"] ||= "text/event-stream"
        headers["cache-control"] ||= "no-cache"
        Response::Head.build(200, headers, "", date, "connection: close\r\n")
      end
    end
  end
end
