# frozen_string_literal: true

require_relative "../native"
Heron::Native.load("heron_ext")

module Heron
  module HTTP2
    # The rules that turn a request's HTTP/2 header fields into its Rack env (RFC 9113 §8.3), in
    # C (ext/heron/heron_http2_request_fields.c), in one place for both ways fields come:
    # Decoder#request (straight from a header block) and RequestFields.fill (decoded fields, for
    # EnvBuilder#build).
    #
    #   RequestFields.fill(env, [[":method", "GET"], ...]) # => nil, or the stream error (not raised)
    #
    # The request line from the pseudo-headers, which must all come first, once each (:method,
    # :scheme and a non-empty :path present); each regular field as HTTP/1.1's parser names it
    # (HTTP_*, CONTENT_TYPE, CONTENT_LENGTH), every value binary, repeated fields joined with
    # ", " (cookie crumbs with "; "), a name with "_" dropped. Refused with EnvBuilder::Malformed:
    # a name in upper case, not a token (RFC 9113 §8.2.1) or connection-specific, te other than
    # "trailers", a pseudo-header unknown, repeated or after a regular field; with
    # EnvBuilder::InvalidTarget: a :path that is not well-formed UTF-8.
    class RequestFields
    end
  end
end
