# frozen_string_literal: true

require "zlib"
require "base64"
require_relative "histogram"

module Heron
  module Attack
    # Writes an HdrHistogram interval log (format version 1.3), the file HdrHistogram's own
    # tools read (HistogramLogProcessor, HistogramLogReader in Java, hdr-histogram-js and the
    # others): a header, then one line per second of due time with that second's corrected
    # latency histogram, compressed in HdrHistogram's V2 encoding. Values are microseconds.
    class HdrLog
      ENCODING_COOKIE = 0x1c849303
      COMPRESSED_COOKIE = 0x1c849304
      SUB_BUCKET_BITS = 11 # 3 significant digits: 2048 sub-buckets, as Histogram uses
      HALF = 1 << (SUB_BUCKET_BITS - 1)

      # @param path [String] the file to write.
      # @param recorder [Recorder] the run; its per-second timeline becomes the intervals.
      # @param started_at [Time] wall-clock time of the run's start (the log's StartTime).
      # @return [void]
      def self.write(path, recorder, started_at)
        File.write(path, new(recorder, started_at).render)
      end

      # @param recorder [Recorder] @param started_at [Time] see {.write}.
      def initialize(recorder, started_at)
        @recorder = recorder
        @started_at = started_at
      end

      # @return [String] the whole log.
      def render
        start = @started_at.to_f
        lines = ["#[Histogram log format version 1.3]",
                 format("#[StartTime: %.3f (seconds since epoch), %s]", start, @started_at.utc),
                 %("StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram")]
        @recorder.timeline.sort.each do |second, (histogram, *)|
          lines << format("%.3f,1.000,%.3f,%s", second, histogram.max / 1000.0, self.class.encode(histogram))
        end
        "#{lines.join("\n")}\n"
      end

      # @param histogram [Histogram] values in microseconds.
      # @return [String] the base64 of its compressed V2 encoding (no newlines).
      def self.encode(histogram)
        raw = encoded(histogram)
        deflated = Zlib::Deflate.deflate(raw)
        Base64.strict_encode64([COMPRESSED_COOKIE, deflated.bytesize].pack("l>l>") + deflated)
      end

      # The uncompressed V2 encoding: a 40-byte header, then the counts array as ZigZag LEB128
      # varints, where a negative number stands for that many empty buckets.
      def self.encoded(histogram)
        payload = payload(histogram)
        [ENCODING_COOKIE, payload.bytesize, 0, 3, 1, histogram.highest].pack("l>l>l>l>q>q>") +
          [1.0].pack("G") + payload
      end

      def self.payload(histogram)
        out = +"".b
        next_index = 0
        histogram.each_bucket do |value, count|
          index = counts_index(value)
          out << varint(-(index - next_index)) if index > next_index
          out << varint(count)
          next_index = index + 1
        end
        out
      end

      # HdrHistogram's countsArrayIndex for lowestDiscernibleValue 1 and 3 significant digits.
      def self.counts_index(value)
        bucket = [value.bit_length - SUB_BUCKET_BITS, 0].max
        ((bucket + 1) << (SUB_BUCKET_BITS - 1)) + ((value >> bucket) - HALF)
      end

      def self.varint(number)
        zigzag = number.negative? ? ((-number) << 1) - 1 : number << 1
        bytes = +"".b
        loop do
          low = zigzag & 0x7f
          zigzag >>= 7
          bytes << (zigzag.zero? ? low : low | 0x80).chr
          return bytes if zigzag.zero?
        end
      end
      private_class_method :encoded, :payload, :counts_index, :varint
    end
  end
end
