# frozen_string_literal: true

require_relative "native"
require_relative "config/settings"
Heron::Native.load("heron_ext")

module Heron
  # Strict HTTP/1.1 request parser (RFC 9112), implemented in C
  # (ext/heron/http_parser.c for the grammar, ext/heron/heron_http_parser.c for this
  # binding). One instance per connection; #reset between requests.
  #
  #   parser = Heron::HTTPParser.new(max_target_bytes: 8192, max_header_bytes: 65536,
  #                                  max_header_fields: 100)
  #   parser.parse(env, buf)       # => nil until the head is complete, then its byte length
  #   parser.content_length        # => Integer or nil
  #   parser.chunked?              # => true when Transfer-Encoding is chunked
  #   parser.keepalive?            # => whether the connection may be reused
  #   parser.http_minor            # => 0 or 1
  #   parser.filter_body(dst, buf) # => true once the chunked body is complete
  #   parser.reset                 # => ready for the next request
  #
  # Every method is documented at its definition in ext/heron/heron_ext.c.
  # Sanitizer builds: HERON_SANITIZE=address (ext/heron/extconf.rb), or
  # ext/heron/fuzz/ruby_asan to run the parser tests under ASan; fuzzing:
  # ext/heron/fuzz/run SECONDS (ext/heron/fuzz/README.md).
  #
  # == What #parse puts in env
  # REQUEST_METHOD, REQUEST_URI (the raw target), PATH_INFO (still
  # percent-encoded), QUERY_STRING ("" when none), SERVER_PROTOCOL, CONTENT_TYPE,
  # CONTENT_LENGTH and HTTP_<NAME> for every other field (upcased, "-" -> "_").
  # All values are binary (ASCII-8BIT) Strings. Repeated fields are joined with
  # ", " (Cookie with "; "); values are stripped of surrounding spaces/tabs.
  # Field names containing "_" are ignored, so "X_Forwarded_For" cannot pass
  # for "X-Forwarded-For" once both are mapped to HTTP_X_FORWARDED_FOR.
  #
  # == Request targets
  # - origin-form "/p?q": PATH_INFO "/p", QUERY_STRING "q".
  # - absolute-form "http://h:1/p?q" (http/https only, no userinfo): PATH_INFO
  #   and QUERY_STRING from it, HTTP_HOST = "h:1" (overrides the Host field);
  #   an empty path gives PATH_INFO "/" ("*" for OPTIONS).
  # - asterisk-form "*": OPTIONS only, PATH_INFO "*" (what Rack::Lint accepts).
  # - authority-form: the CONNECT method is answered 501 NotImplemented (Heron
  #   is not a proxy); "host:port" with any other method is 400.
  # - '#', bytes outside visible ASCII, and targets longer than
  #   max_target_bytes (414) are rejected.
  #
  # == Host
  # HTTP/1.1 requires exactly one Host field; its value must be
  # uri-host [":" port] (the shape Rack::Lint accepts for HTTP_HOST), else 400.
  #
  # == Incremental parsing
  # Pass the same (growing) buffer until #parse returns the head length; parsing
  # resumes where it stopped, so each byte is scanned once. env is only written
  # when the head is complete, in one go. Call #reset before the next request.
  #
  # == Decisions on ambiguous points
  # - Content-Length may appear once: a repeat is 400 even with an equal value,
  #   and so is the list form "5, 5".
  # - Transfer-Encoding: only "chunked" (any case) is implemented, at most once
  #   and last. Last coding not chunked ("gzip", "chunked, gzip") -> 400;
  #   "chunked, chunked" -> 400; another coding before chunked ("gzip, chunked")
  #   -> 501 NotImplemented. With Content-Length, or in HTTP/1.0 -> 400.
  # - A request line without a version ("GET /") is 400; a well-formed version
  #   other than 1.0/1.1 ("HTTP/2.0", "HTTP/0.9") is 505.
  # - Up to 8 empty lines before the request line are skipped; more is 400.
  # - Methods are tokens of at most 32 bytes.
  # - max_header_bytes counts the header section after the request line,
  #   through the final CRLF. The same limits bound chunked trailers.
  class HTTPParser
    # Base class of every parse error. #status is the HTTP status code to
    # answer with before closing the connection.
    class Error < StandardError
      # STATUS = 400 (defined in C); #status returns the class's STATUS.
    end

    # 400: malformed or ambiguous request (the usual case).
    class BadRequest < Error; end

    # 414: request target longer than max_target_bytes.
    class URITooLong < Error; end

    # 431: header section over max_header_bytes or more than max_header_fields
    # fields (also for chunked trailers).
    class HeaderFieldsTooLarge < Error; end

    # 501: CONNECT, or a transfer coding other than chunked.
    class NotImplemented < Error; end

    # 505: well-formed HTTP version other than 1.0 and 1.1.
    class VersionNotSupported < Error; end

    # The limits #initialize takes, and their defaults (the settings of the same names).
    LIMITS = Config::Settings.defaults.slice(:max_target_bytes, :max_header_bytes, :max_header_fields,
                                             :max_chunk_extension_bytes, :max_total_chunk_extension_bytes).freeze

    # @param limits [Hash] any of {LIMITS}; the others keep their defaults.
    # @return [HTTPParser]
    def self.new(**limits)
      super(**LIMITS, **limits)
    end
  end
end
