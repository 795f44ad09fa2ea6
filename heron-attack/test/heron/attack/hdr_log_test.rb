# frozen_string_literal: true

require "test_helper"
require "open3"
require "tmpdir"
require "heron/attack"
require "heron/attack/hdr_log"

class HdrLogTest < Minitest::Test
  JAR = "/usr/share/java/hdrhistogram.jar" # Debian's libhdrhistogram-java, installed by bin/setup

  def recorder
    recorder = Heron::Attack::Recorder.new(0.0)
    [[0.1, 150], [0.2, 3000], [0.3, 3001], [1.1, 500], [1.2, 2_500_000], [1.3, 7]].each do |due, us|
      recorder.response!(due, due, due + (us / 1e6), 200, 0)
    end
    recorder
  end

  def test_header_and_one_line_per_second
    lines = Heron::Attack::HdrLog.new(recorder, Time.at(1_700_000_000)).render.lines
    assert_equal "#[Histogram log format version 1.3]\n", lines[0]
    assert_match(/\A#\[StartTime: 1700000000\.000 \(seconds since epoch\), /, lines[1])
    assert_equal %("StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"\n), lines[2]
    assert_match(/\A0\.000,1\.000,3\.001,HIST\S+\n\z/, lines[3])
    assert_match(/\A1\.000,1\.000,2500\.000,HIST\S+\n\z/, lines[4])
  end

  def test_hdrhistogram_decodes_every_value
    assert File.exist?(JAR), "#{JAR} missing: run bin/setup"
    Dir.mktmpdir do |dir|
      path = File.join(dir, "x.hlog")
      Heron::Attack::HdrLog.write(path, recorder, Time.at(1_700_000_000))
      out, status = Open3.capture2e("java", "-cp", JAR, "org.HdrHistogram.HistogramLogProcessor", "-i", path, "-csv",
                                    "-outputValueUnitRatio", "1")
      assert status.success?, out
      values = out.lines.grep(/\A[\d.]+,[\d.]+,\d+,/).map { |l| [l.to_f.round, l.split(",")[2].to_i] }.uniq
      # highest equivalent values: 3000 and 3001 share a bucket, 2,500,000 is kept to 3 digits
      assert_equal [[7, 1], [150, 2], [500, 3], [3001, 5], [2_500_607, 6]], values
    end
  end
end
