# tprimat peak: panels from peak_bars.dat (peaks) and peak_steps.dat (every step).
# Restyle freely, then: gnuplot -e 'fmt="png"' peak.gp (or fmt="svg").
if (!exists("fmt")) fmt = "png"
if (fmt eq "svg") {
  set terminal svg size 1800,1000 dynamic font "sans,10"
  set output "peak_throughput_analysis.svg"
} else {
  set terminal pngcairo size 1800,1000 font "sans,10"
  set output "peak_throughput_analysis.png"
}
set termoption noenhanced
set datafile missing "NaN"
set grid ytics
set style fill solid 0.8 border -1
bar_value(v) = abs(v) >= 1000 ? sprintf("%.0f", v) : sprintf("%.3g", v)
set multiplot layout 2,3 title "tprimat peak throughput (TFLOP/s: PaLM model FLOPs; MFU against dense bf16 peaks)\nevery result: nvd, minimal_communication, 1 GPU\nproxies: llama 13 of 32 layers, qwen 12 of 28 layers" font ",11"
set bmargin 3
set xrange [-0.5:1.5]
set xtics norotate font ",9" ("qwen" 0, "llama" 1)
set yrange [0:*]
set offsets 0, 0, graph 0.12, 0
set title "Peak throughput (tokens/s)"
plot "peak_bars.dat" using 1:3:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:3:(bar_value($3)) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Peak compute (TFLOP/s, all GPUs)"
plot "peak_bars.dat" using 1:4:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:4:(bar_value($4)) with labels offset 0,0.7 font ",9" notitle
unset label
set title "MFU (% of the dense peak)"
plot "peak_bars.dat" using 1:5:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:5:(bar_value($5)) with labels offset 0,0.7 font ",9" notitle
unset label
set bmargin 3
set title "Per-GPU throughput (tokens/s/GPU)"
plot "peak_bars.dat" using 1:6:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:6:(bar_value($6)) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Step time at peak (s)"
plot "peak_bars.dat" using 1:8:(0.6):9 with boxes lc rgb variable notitle, \
     "" using 1:8:(bar_value($8)) with labels offset 0,0.7 font ",9" notitle
unset label
set title "Step time of every measured step (s), per configuration; bar: mean"
set xrange [-0.5:1.5]
set xtics norotate font ",9" ("llama" 0, "qwen" 1)
set autoscale y
set offsets 0, 0, graph 0.08, graph 0.08
plot "peak_steps.dat" index 0 using 1:2:3 with points pt 7 ps 1.2 lc rgb variable notitle, \
     "" index 1 using 1:2:3:(0) with vectors nohead lw 2 lc rgb "black" notitle
unset multiplot
